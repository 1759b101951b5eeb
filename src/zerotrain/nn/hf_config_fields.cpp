// The token ids of a config.json (see hf_config_fields.h).
#include "zerotrain/nn/hf_config_fields.h"

namespace zt::nn {

namespace {
// A token id: an integer, a list (the first is kept), or null (-1).
int64_t token_id(const HfConfigFields& f, const char* key, int64_t def) {
  if (!f.present(key)) return def;
  const nlohmann::json& v = f.at(key);
  if (v.is_null()) return -1;
  if (v.is_array()) {
    if (v.empty()) return -1;
    if (!v[0].is_number_integer()) f.bad_type(key, "an integer or a list of integers");
    return v[0].get<int64_t>();
  }
  return f.req_int(key);
}

}  // namespace

void read_token_ids(const HfConfigFields& f, ModelConfig& c, int64_t bos, int64_t eos) {
  c.bos_token_id = token_id(f, "bos_token_id", bos);
  c.eos_token_id = token_id(f, "eos_token_id", eos);
}

}  // namespace zt::nn
