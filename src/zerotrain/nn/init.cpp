// Parameter initialization (see init.h). Normals by Box-Muller over splitmix64, portable across
// standard libraries (std::normal_distribution is not).
#include "zerotrain/nn/init.h"

#include <cmath>
#include <numbers>

#include "zerotrain/core/error.h"
#include "zerotrain/nn/architecture.h"

namespace zt::nn {

namespace {

constexpr uint64_t kGolden = 0x9E3779B97F4A7C15ull;  // splitmix64's increment

uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += kGolden);
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

// [Note: init slices] The generator's state advances by a fixed constant per draw and each pair of
// elements (2k, 2k + 1) takes draws 2k and 2k + 1, so the state before pair k is
// base + 2k * constant: a slice starts there and gives bitwise the elements the full stream gives.
std::vector<float> normal_values_range(uint64_t seed, const std::string& name, size_t begin,
                                       size_t end, float std) {
  if (end < begin)
    throw ValueError("init", str(name, ": element range [", begin, ", ", end, ") is reversed"));
  const size_t first_pair = begin / 2;
  uint64_t state = (seed ^ fnv1a(name)) + 2 * static_cast<uint64_t>(first_pair) * kGolden;
  std::vector<float> out(end - begin);
  for (size_t i = first_pair * 2; i < end; i += 2) {
    const double r = std::sqrt(-2.0 * std::log(uniform01(state)));
    const double theta = 2.0 * std::numbers::pi * uniform01(state);
    if (i >= begin) out[i - begin] = static_cast<float>(std * r * std::cos(theta));
    if (i + 1 < end) out[i + 1 - begin] = static_cast<float>(std * r * std::sin(theta));
  }
  return out;
}

std::vector<float> normal_values(uint64_t seed, const std::string& name, size_t n, float std) {
  return normal_values_range(seed, name, 0, n, std);
}

std::vector<float> init_values_range(const ModelConfig& config, const Parameter& p, uint64_t seed,
                                     float std, int64_t begin, int64_t end) {
  const int64_t n = numel_of(p.shape);
  if (begin < 0 || end < begin || end > n)
    throw ValueError("init", str(p.name, ": elements [", begin, ", ", end, ") out of range for ",
                                 to_string(p.shape)));
  const auto count = static_cast<size_t>(end - begin);
  switch (p.kind) {
    case ParamKind::bias:
      return std::vector<float>(count, 0.0f);
    case ParamKind::norm:
      return std::vector<float>(count, 1.0f);
    case ParamKind::weight:
    case ParamKind::embedding:
      break;
  }
  float s = std;
  if (architecture_of(config).conv1d && ends_with(p.name, ".c_proj.weight"))
    s = static_cast<float>(std / std::sqrt(2.0 * static_cast<double>(config.num_layers)));
  return normal_values_range(seed, p.name, static_cast<size_t>(begin), static_cast<size_t>(end), s);
}

std::vector<float> init_values(const ModelConfig& config, const Parameter& p, uint64_t seed,
                               float std) {
  return init_values_range(config, p, seed, std, 0, numel_of(p.shape));
}

}  // namespace zt::nn
