// The optimizers' parts of the initial state; see optimizer_state_parts.h.
#include "zerotrain/zero/optimizer_state_parts.h"

#include <string_view>

#include "zerotrain/optim/state_slots.h"

namespace zt::zero {

std::string param_of_state(const std::string& name) {
  for (const std::string_view suffix : optim::all_state_suffixes())
    if (name.ends_with(suffix)) return name.substr(0, name.size() - suffix.size());
  return name;
}

optim::OptimizerState state_part(const optim::OptimizerState& initial,
                                 const std::set<std::string>& all_params,
                                 std::span<const optim::FlatParam> mine, bool strays) {
  if (all_params.size() == mine.size()) return initial;
  std::set<std::string> names;
  for (const optim::FlatParam& p : mine)
    names.insert(p.name);
  optim::OptimizerState st;
  st.step = initial.step;
  for (const auto& [name, t] : initial.tensors) {
    const std::string param = param_of_state(name);
    if (names.contains(param) || (strays && !all_params.contains(param)))
      st.tensors.emplace(name, t);
  }
  return st;
}

}  // namespace zt::zero
