// Parameter counts from zerotrain's model builder, nothing allocated (see param_count.h).
#include "zerotrain/estimate/param_count.h"

#include <algorithm>
#include <functional>
#include <map>

#include "zerotrain/nn/transformer.h"

namespace zt::estimate {

namespace {

std::string module_of(const std::string& param_name) {
  const size_t dot = param_name.rfind('.');
  return dot == std::string::npos ? param_name : param_name.substr(0, dot);
}

}  // namespace

ParamCount count_params(const nn::ModelConfig& c) {
  c.validate();
  nn::TransformerOptions o;
  o.allocate = false;
  nn::Transformer model(c, o);
  ParamCount r;
  std::map<std::string, int64_t> modules;
  for (auto& block : model.blocks()) {
    ParamUnit u{block->name(), 0};
    for (nn::Parameter* p : block->parameters()) {
      const int64_t n = numel_of(p->shape);
      u.params += n;
      modules[module_of(p->name)] += n;
    }
    for (nn::Parameter* p : block->shared_parameters())
      modules[block->name()] += numel_of(p->shape);
    r.total += u.params;
    r.units.push_back(std::move(u));
  }
  for (const auto& [name, n] : modules)
    r.largest_layer = std::max(r.largest_layer, n);
  return r;
}

int64_t ParamCount::largest_unit() const {
  int64_t m = 0;
  for (const ParamUnit& u : units)
    m = std::max(m, u.params);
  return m;
}

int64_t ParamCount::second_largest_unit() const {
  std::vector<int64_t> p;
  for (const ParamUnit& u : units)
    p.push_back(u.params);
  if (p.size() < 2) return 0;
  std::partial_sort(p.begin(), p.begin() + 2, p.end(), std::greater<>());
  return p[1];
}

}  // namespace zt::estimate
