// Parameter initialization (see init.h). Normals by Box-Muller over splitmix64, portable across
// standard libraries (std::normal_distribution is not).
#include "zerotrain/nn/init.h"

#include <cmath>
#include <numbers>

#include "zerotrain/nn/architecture.h"

namespace zt::nn {

namespace {

uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

uint64_t fnv1a(const std::string& s) {
  uint64_t h = 0xCBF29CE484222325ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001B3ull;
  }
  return h;
}

// Uniform in (0, 1]: never 0, so the logarithm below is finite.
double uniform01(uint64_t& state) {
  return (static_cast<double>(splitmix64(state) >> 11) + 1.0) * 0x1.0p-53;
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

std::vector<float> normal_values(uint64_t seed, const std::string& name, size_t n, float std) {
  uint64_t state = seed ^ fnv1a(name);
  std::vector<float> out(n);
  for (size_t i = 0; i < n; i += 2) {
    const double r = std::sqrt(-2.0 * std::log(uniform01(state)));
    const double theta = 2.0 * std::numbers::pi * uniform01(state);
    out[i] = static_cast<float>(std * r * std::cos(theta));
    if (i + 1 < n) out[i + 1] = static_cast<float>(std * r * std::sin(theta));
  }
  return out;
}

std::vector<float> init_values(const ModelConfig& config, const Parameter& p, uint64_t seed,
                               float std) {
  const size_t n = static_cast<size_t>(numel_of(p.shape));
  switch (p.kind) {
    case ParamKind::bias:
      return std::vector<float>(n, 0.0f);
    case ParamKind::norm:
      return std::vector<float>(n, 1.0f);
    case ParamKind::weight:
    case ParamKind::embedding:
      break;
  }
  float s = std;
  if (architecture_of(config).conv1d && ends_with(p.name, ".c_proj.weight"))
    s = static_cast<float>(std / std::sqrt(2.0 * static_cast<double>(config.num_layers)));
  return normal_values(seed, p.name, n, s);
}

}  // namespace zt::nn
