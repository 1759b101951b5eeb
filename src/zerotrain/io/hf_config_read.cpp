// parse_hf_config / read_hf_config: config.json -> nn::ModelConfig (see hf_config.h): the keys
// every family shares and the shape checks; each family's own keys are read by the rules in its
// traits (FamilyTraits::config_json, nn/family_<name>.cpp).
#include "zerotrain/core/files.h"
#include "zerotrain/io/hf_config.h"
#include "zerotrain/nn/family_registry.h"
#include "zerotrain/nn/hf_config_fields.h"
#include "zerotrain/nn/model_size.h"

namespace zt::io {

namespace {
using nn::kHfConfigComponent;
constexpr std::string_view kComponent = kHfConfigComponent;
using nlohmann::json;
using nn::Family;
using nn::HfConfigFields;
using nn::ModelConfig;

Family parse_family(const HfConfigFields& f) {
  const std::string t = f.req_str("model_type");
  if (const nn::FamilyTraits* family = nn::find_family(t)) return family->family;
  f.unsupported("model_type",
                str(quote_excerpt(t), " is not supported (supported: ", nn::family_names(), ")"));
}

void check_shape(const HfConfigFields& f, ModelConfig& c) {
  const nn::HfConfigRules& family = nn::family_traits(c.family).config_json;
  const nn::HfConfigKeys& k = family.keys;
  auto positive = [&](const char* key, int64_t v) {
    if (v <= 0) f.unsupported(key, str("must be positive, got ", v));
  };
  positive("vocab_size", c.vocab_size);
  positive(k.hidden, c.hidden_size);
  positive(k.inter, c.intermediate_size);
  positive(k.layers, c.num_layers);
  positive(k.heads, c.num_heads);
  positive(k.max_pos, c.max_position_embeddings);
  if (family.reads_kv_heads) positive("num_key_value_heads", c.num_kv_heads);
  if (c.head_dim == 0) {
    if (c.hidden_size % c.num_heads != 0)
      f.unsupported(k.hidden,
                    str(c.hidden_size, " is not a multiple of ", k.heads, " (", c.num_heads, ")",
                        family.reads_kv_heads ? " and head_dim is not given" : ""));
    c.head_dim = c.hidden_size / c.num_heads;
  }
  positive("head_dim", c.head_dim);
  if (c.num_heads % c.num_kv_heads != 0)
    f.unsupported("num_key_value_heads",
                  str(c.num_kv_heads, " does not divide ", k.heads, " (", c.num_heads, ")"));
  if (!(c.norm_eps > 0)) f.unsupported(k.eps, str("must be positive, got ", c.norm_eps));
  if (c.sliding_window < 0)
    f.unsupported("sliding_window", str("must not be negative, got ", c.sliding_window));
  if (const std::optional<nn::SizeProblem> p = nn::find_size_problem(c))
    f.unsupported(hf_config_key(c.family, p->field), p->message);
}

std::string parse_torch_dtype(const HfConfigFields& f) {
  const char* key = f.has("torch_dtype") ? "torch_dtype" : "dtype";
  const std::string d = f.opt_str(key, "float32");
  if (d != "float32" && d != "float16" && d != "bfloat16")
    f.unsupported(
        key, str(quote_excerpt(d), " is not supported (supported: float32, float16, bfloat16)"));
  return d;
}
}  // namespace

ModelConfig parse_hf_config(std::string_view json_text, const std::string& source) {
  const json j = parse_json(json_text, kComponent, source);
  if (!j.is_object())
    throw FormatError(kComponent, str(source, ": expected a JSON object, got ", describe_json(j)));
  const HfConfigFields f(j, source);
  ModelConfig c;
  c.family = parse_family(f);
  nn::family_traits(c.family).config_json.read(f, c);
  c.torch_dtype = parse_torch_dtype(f);
  check_shape(f, c);
  return c;
}

const char* hf_config_key(Family family, std::string_view field) {
  const nn::HfConfigKeys& k = nn::family_traits(family).config_json.keys;
  if (field == "hidden_size") return k.hidden;
  if (field == "intermediate_size") return k.inter;
  if (field == "num_layers") return k.layers;
  if (field == "num_heads") return k.heads;
  if (field == "max_position_embeddings") return k.max_pos;
  if (field == "num_kv_heads") return "num_key_value_heads";
  if (field == "head_dim") return "head_dim";
  return "vocab_size";
}

ModelConfig read_hf_config(const std::filesystem::path& path) {
  const auto file = std::filesystem::is_directory(path) ? path / "config.json" : path;
  return parse_hf_config(read_text_file(file, kComponent), file.string());
}

}  // namespace zt::io
