// Weight-decay groups; see param_groups.h. Tested by tests/optim/test_param_groups.cpp.
#include "zerotrain/optim/param_groups.h"

#include <algorithm>
#include <cmath>

#include "zerotrain/core/error.h"

namespace zt::optim {

namespace {

constexpr std::string_view kComponent = "param_groups";

nn::ParamKind parse_kind(const nlohmann::json& v) {
  if (v == "weight") return nn::ParamKind::weight;
  if (v == "bias") return nn::ParamKind::bias;
  if (v == "norm") return nn::ParamKind::norm;
  if (v == "embedding") return nn::ParamKind::embedding;
  throw ValueError(kComponent, str("decay_kinds entry ", v.dump(),
                                   ": expected \"weight\", \"bias\", \"norm\" or \"embedding\""));
}

}  // namespace

float weight_decay_for(const nn::Parameter& p, const WeightDecayPolicy& policy) {
  if (std::find(policy.decay_kinds.begin(), policy.decay_kinds.end(), p.kind) ==
      policy.decay_kinds.end())
    return 0.0f;
  for (const std::string& s : policy.no_decay_names)
    if (p.name.find(s) != std::string::npos) return 0.0f;
  return policy.weight_decay;
}

WeightDecayPolicy parse_weight_decay_policy(const nlohmann::json& j) {
  if (!j.is_object()) throw ValueError(kComponent, str("expected a JSON object, got ", j.dump()));
  WeightDecayPolicy p;
  for (const auto& [key, v] : j.items()) {
    if (key == "weight_decay") {
      if (!v.is_number() || !(v.get<double>() >= 0) || !std::isfinite(v.get<double>()))
        throw ValueError(kComponent, str("weight_decay = ", v.dump(), ": must be a number >= 0"));
      p.weight_decay = v.get<float>();
    } else if (key == "decay_kinds") {
      if (!v.is_array())
        throw ValueError(kComponent, str("decay_kinds = ", v.dump(), ": not a list"));
      p.decay_kinds.clear();
      for (const auto& k : v)
        p.decay_kinds.push_back(parse_kind(k));
    } else if (key == "no_decay_names") {
      if (!v.is_array())
        throw ValueError(kComponent, str("no_decay_names = ", v.dump(), ": not a list"));
      p.no_decay_names.clear();
      for (const auto& s : v) {
        if (!s.is_string() || s.get<std::string>().empty())
          throw ValueError(kComponent,
                           str("no_decay_names entry ", s.dump(), ": not a non-empty string"));
        p.no_decay_names.push_back(s.get<std::string>());
      }
    } else {
      throw ValueError(kComponent, str("unknown key \"", key, "\""));
    }
  }
  return p;
}

}  // namespace zt::optim
