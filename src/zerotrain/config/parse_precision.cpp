// fp16, bf16 (the legacy `bfloat16` was renamed by deprecations.cpp), amp, communication_data_type
// and data_types (DeepSpeed's precision_config.py and config.py).
#include <array>
#include <cmath>

#include "zerotrain/config/parse_sections.h"
#include "zerotrain/core/error.h"
#include "zerotrain/core/json_util.h"

namespace zt::config {

namespace {

void read_fp16(Section& s, Fp16Config& f) {
  f.enabled = s.get_bool("enabled", f.enabled);
  f.auto_cast = s.get_bool("auto_cast", f.auto_cast);
  f.loss_scale = s.get_double("loss_scale", f.loss_scale, 0.0);
  f.initial_scale_power = s.get_int("initial_scale_power", f.initial_scale_power, 0);
  f.loss_scale_window = s.get_int("loss_scale_window", f.loss_scale_window, 1);
  f.hysteresis = s.get_int("hysteresis", f.hysteresis, 1);
  f.consecutive_hysteresis = s.get_bool("consecutive_hysteresis", f.consecutive_hysteresis);
  // Older DeepSpeed kept min_loss_scale as a float; files with 1e-10 or 0.5 exist.
  if (const Json* m = s.peek("min_loss_scale");
      m && m->is_number_float() && std::trunc(m->get<double>()) != m->get<double>())
    fail(s.path_of("min_loss_scale"),
         str("expected an integer, got ", describe_json(*m),
             "; DeepSpeed >= 0.17.1 refuses this too (an integer there; older DeepSpeed took a "
             "fraction)"));
  f.min_loss_scale = s.get_int("min_loss_scale", f.min_loss_scale, 0);
  f.fp16_master_weights_and_grads =
      s.get_bool("fp16_master_weights_and_grads", f.fp16_master_weights_and_grads);
  s.finish();
}

void read_bf16(Section& s, Bf16Config& b) {
  b.enabled = s.get_bool("enabled", b.enabled);
  b.immediate_grad_update = s.get_bool("immediate_grad_update", b.immediate_grad_update);
  b.check_grad_overflow = s.get_bool("check_grad_overflow", b.check_grad_overflow);
  b.bf16_master_weights_and_grads =
      s.get_bool("bf16_master_weights_and_grads", b.bf16_master_weights_and_grads);
  b.bf16_optimizer_states = s.get_bool("bf16_optimizer_states", b.bf16_optimizer_states);
  s.finish();
}

// The spellings DeepSpeed's DtypeEnum accepts for the three training precisions.
const std::vector<std::string> kPrecisionNames = {"fp16",     "float16", "half",    "bf16",
                                                  "bfloat16", "fp32",    "float32", "float"};
constexpr std::array kPrecisionOf = {PrecisionName::fp16, PrecisionName::fp16, PrecisionName::fp16,
                                     PrecisionName::bf16, PrecisionName::bf16, PrecisionName::fp32,
                                     PrecisionName::fp32, PrecisionName::fp32};

std::optional<PrecisionName> read_precision(Section& s, const char* key,
                                            const std::vector<std::string>& names) {
  const std::optional<size_t> i = s.get_opt_choice(key, names, true);
  if (!i) return std::nullopt;
  return kPrecisionOf[*i];
}

}  // namespace

void parse_precision(Section& root, DsConfig& c) {
  if (auto s = root.get_section("fp16")) read_fp16(*s, c.fp16);
  if (auto s = root.get_section("bf16")) read_bf16(*s, c.bf16);
  if (c.fp16.enabled && c.bf16.enabled)
    fail("bf16.enabled", "bf16 and fp16 cannot both be enabled");
  if (const Json* amp = root.get_raw("amp")) {
    Section s(*amp, "amp");
    c.amp.enabled = s.get_bool("enabled", false);
    Json params = *amp;
    params.erase("enabled");
    c.amp.params_json = params.dump();  // passed through to Apex by DeepSpeed; not checked
  }
  // DeepSpeed accepts only these three names here (case-insensitive).
  if (auto i = root.get_opt_choice("communication_data_type", {"fp16", "bf16", "fp32"}, true))
    c.communication_data_type = static_cast<PrecisionName>(*i);
  if (auto s = root.get_section("data_types")) {
    c.data_types.grad_accum_dtype = read_precision(*s, "grad_accum_dtype", kPrecisionNames);
    c.data_types.param_dtype = read_precision(*s, "param_dtype", kPrecisionNames);
    c.data_types.buffer_dtype = read_precision(*s, "buffer_dtype", kPrecisionNames);
    s->finish();
  }
}

}  // namespace zt::config
