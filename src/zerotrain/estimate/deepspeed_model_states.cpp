// DeepSpeed's model-state estimators (see deepspeed_model_states.h).
#include "zerotrain/estimate/deepspeed_model_states.h"

#include <algorithm>
#include <cstdio>

#include "zerotrain/estimate/checks.h"

namespace zt::estimate {

namespace {

constexpr double kGiB = 1073741824.0;

// Python's int() of a non-negative float: truncation. A value past int64 (a buffer factor of
// 1e308) is refused rather than wrapped to a negative size.
int64_t trunc(double v) {
  if (!(v < 9223372036854775807.0))
    throw ValueError(kComponent, str("a byte count of the estimate, ", v,
                                     ", is past 2^63: additional_buffer_factor or the sizes are "
                                     "too large"));
  return static_cast<int64_t>(v);
}

void check_setup(const DeepSpeedSetup& s) {
  require_positive(s.gpus_per_node, "num_gpus_per_node");
  require_positive(s.nodes, "num_nodes");
  require_positive(s.additional_buffer_factor, "additional_buffer_factor");
}

// The printers pad the offload device to 4 characters: "cpu " or "none".
const char* device(bool offloaded) {
  return offloaded ? "cpu " : "none";
}

std::string zero2_options(bool offload_optimizer) {
  return str("offload_optimizer=", device(offload_optimizer));
}

std::string zero3_options(bool offload_param, bool offload_optimizer, bool zero_init) {
  return str("offload_param=", device(offload_param),
             ", offload_optimizer=", device(offload_optimizer), ", zero_init=", zero_init ? 1 : 0);
}

}  // namespace

ModelStatesBytes zero2_model_states(double p, const DeepSpeedSetup& s, bool offload_optimizer,
                                    Zero2Formula formula) {
  require_param_count(p, "total_params");
  check_setup(s);
  const double g = static_cast<double>(s.total_gpus());
  const double abf = s.additional_buffer_factor;
  if (offload_optimizer) {
    const double mult = static_cast<double>(std::max<int64_t>(4 * s.total_gpus(), 16));
    return {trunc(p * mult * abf), trunc(2 * p)};
  }
  const double gpu = formula == Zero2Formula::current
                         ? 2 * p + static_cast<double>(trunc(18 * p / g))
                         : 4 * p + static_cast<double>(trunc(16 * p / g));
  const double per_node = static_cast<double>(4 * s.gpus_per_node);
  return {trunc(p * per_node * abf), trunc(gpu)};
}

int64_t zero3_largest_layer_memory(double l) {
  return trunc(4 * l);
}

ModelStatesBytes zero3_model_states(double p, double l, const DeepSpeedSetup& s,
                                    bool offload_optimizer, bool offload_param, bool zero_init) {
  require_param_count(p, "total_params");
  require_largest_layer(l, p, "largest_layer_params");
  check_setup(s);
  if (offload_param && !offload_optimizer)
    throw ValueError(kComponent,
                     "offload_param=cpu needs offload_optimizer=cpu (DeepSpeed has "
                     "no row for parameters offloaded alone)");
  const double g = static_cast<double>(s.total_gpus());
  const double abf = s.additional_buffer_factor;
  const double gpus_factor = 1.0 / static_cast<double>(s.nodes);
  const double init_mult = static_cast<double>(4 * s.gpus_per_node);  // fp32 model per GPU
  const double layer = 4 * l;
  if (!offload_optimizer) {
    const double gpu = layer + static_cast<double>(trunc(18 * p / g));
    const double cpu = zero_init ? l * init_mult * abf : p * init_mult * abf;
    return {trunc(cpu), trunc(gpu)};
  }
  // Host-side bytes per parameter: 16 (fp32 params, grads, momentum, variance) + 2 when the
  // 16-bit params are offloaded too; without zero.Init the fp32 model may be bigger. Python
  // evaluates P * 18 * gpus_factor * abf left to right, and max(4n, 18 * gpus_factor) first.
  const double host = offload_param ? 18 : 16;
  const double gpu = offload_param ? layer : layer + static_cast<double>(trunc(2 * p / g));
  const double cpu =
      zero_init ? p * host * gpus_factor * abf : p * std::max(init_mult, host * gpus_factor) * abf;
  return {trunc(cpu), trunc(gpu)};
}

DeepSpeedTable zero2_table(double p, const DeepSpeedSetup& s, Zero2Formula formula) {
  DeepSpeedTable t;
  t.stage = 2;
  t.setup = s;
  t.total_params = p;
  for (bool offload : {true, false}) {
    DeepSpeedRow r;
    r.offload_optimizer = offload;
    r.bytes = zero2_model_states(p, s, offload, formula);
    r.options = zero2_options(offload);
    t.rows.push_back(r);
  }
  return t;
}

DeepSpeedTable zero3_table(double p, double l, const DeepSpeedSetup& s) {
  DeepSpeedTable t;
  t.stage = 3;
  t.setup = s;
  t.total_params = p;
  t.largest_layer_params = l;
  const bool offloads[3][2] = {{true, true}, {false, true}, {false, false}};  // {param, optim}
  for (const auto& o : offloads) {
    for (bool zero_init : {true, false}) {
      DeepSpeedRow r;
      r.offload_param = o[0];
      r.offload_optimizer = o[1];
      r.zero_init = zero_init;
      r.bytes = zero3_model_states(p, l, s, o[1], o[0], zero_init);
      r.options = zero3_options(o[0], o[1], zero_init);
      t.rows.push_back(r);
    }
  }
  return t;
}

std::string format_row(const DeepSpeedRow& row) {
  char buf[64];
  std::snprintf(buf, sizeof buf, " %7.2fGB | %6.2fGB | ", static_cast<double>(row.bytes.cpu) / kGiB,
                static_cast<double>(row.bytes.gpu) / kGiB);
  return buf + row.options;
}

std::string format_table(const DeepSpeedTable& t) {
  const DeepSpeedSetup& s = t.setup;
  std::string out = "Estimated memory needed for params, optim states and gradients for a:\n";
  out += str("HW: Setup with ", s.nodes, s.nodes > 1 ? " nodes, " : " node, ", s.gpus_per_node,
             s.gpus_per_node > 1 ? " GPUs" : " GPU", " per node.\n");
  out += str("SW: Model with ", trunc(t.total_params / 1e6), "M total params");
  if (t.stage == 3) out += str(", ", trunc(t.largest_layer_params / 1e6), "M largest layer params");
  out += ".\n  per CPU  |  per GPU |   Options\n";
  for (const DeepSpeedRow& r : t.rows)
    out += format_row(r) + "\n";
  return out;
}

}  // namespace zt::estimate
