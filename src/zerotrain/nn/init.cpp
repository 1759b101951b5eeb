// Parameter initialization (see init.h and [Note: init slices]).
#include "zerotrain/nn/init.h"

#include <cmath>

#include "zerotrain/core/error.h"
#include "zerotrain/kernels/random_normal.h"
#include "zerotrain/nn/family_registry.h"

namespace zt::nn {

namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The standard deviation of a weight or embedding.
float weight_std(const ModelConfig& config, const Parameter& p, float std) {
  const std::string scaled = family_traits(config.family).scaled_init_suffix;
  if (!scaled.empty() && ends_with(p.name, scaled))
    return static_cast<float>(std / std::sqrt(2.0 * static_cast<double>(config.num_layers)));
  return std;
}

}  // namespace

uint64_t init_stream_id(const std::string& name) {
  uint64_t h = 0xCBF29CE484222325ull;
  for (unsigned char c : name) {
    h ^= c;
    h *= 0x100000001B3ull;
  }
  return h;
}

void init_fill(const ModelConfig& config, const Parameter& p, uint64_t seed, float std,
               int64_t begin, Tensor& dst, Stream stream) {
  const int64_t n = numel_of(p.shape);
  if (!dst.defined()) throw ValueError("init", str(p.name, ": destination tensor is undefined"));
  const int64_t end = begin + dst.numel();
  if (begin < 0 || end > n)
    throw ValueError("init", str(p.name, ": elements [", begin, ", ", end, ") out of range for ",
                                 to_string(p.shape)));
  switch (p.kind) {
    case ParamKind::bias:
      dst.fill(0.0, stream);
      return;
    case ParamKind::norm:
      dst.fill(1.0, stream);
      return;
    case ParamKind::weight:
    case ParamKind::embedding:
      break;
  }
  kernels::random_normal(dst, seed, init_stream_id(p.name), begin, weight_std(config, p, std),
                         stream);
}

std::vector<float> init_values_range(const ModelConfig& config, const Parameter& p, uint64_t seed,
                                     float std, int64_t begin, int64_t end) {
  if (end < begin)
    throw ValueError("init", str(p.name, ": element range [", begin, ", ", end, ") is reversed"));
  Tensor host = Tensor::empty({end - begin}, DType::f32, Device::cpu());
  init_fill(config, p, seed, std, begin, host);
  return host.to_floats();
}

std::vector<float> init_values(const ModelConfig& config, const Parameter& p, uint64_t seed,
                               float std) {
  return init_values_range(config, p, seed, std, 0, numel_of(p.shape));
}

}  // namespace zt::nn
