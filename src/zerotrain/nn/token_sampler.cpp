// Token sampler (see token_sampler.h).
#include "zerotrain/nn/token_sampler.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "zerotrain/core/error.h"

namespace zt::nn {

namespace {

int64_t argmax(std::span<const float> logits) {
  return std::max_element(logits.begin(), logits.end()) - logits.begin();
}

// A uniform double in [0, 1) from the top 53 bits of one draw (the same on every platform).
double uniform(std::mt19937_64& rng) {
  return static_cast<double>(rng() >> 11) * 0x1.0p-53;
}

}  // namespace

TokenSampler::TokenSampler(const SamplingOptions& options) : options_(options), rng_(options.seed) {
  if (!std::isfinite(options.temperature) || options.temperature < 0)
    throw ValueError("generate",
                     str("temperature must be finite and >= 0, got ", options.temperature));
  if (!(options.top_p > 0 && options.top_p <= 1))
    throw ValueError("generate", str("top_p must be in (0, 1], got ", options.top_p));
}

int64_t TokenSampler::next(std::span<const float> logits) {
  if (logits.empty()) throw ValueError("generate", "no logits to pick a token from");
  if (options_.temperature == 0) return argmax(logits);
  const size_t v = logits.size();
  const double max_logit = logits[static_cast<size_t>(argmax(logits))];
  probs_.resize(v);
  double total = 0;
  for (size_t i = 0; i < v; ++i) {
    probs_[i] = std::exp((logits[i] - max_logit) / options_.temperature);
    total += probs_[i];
  }
  order_.resize(v);
  std::iota(order_.begin(), order_.end(), 0);
  std::stable_sort(order_.begin(), order_.end(), [&](int64_t a, int64_t b) {
    return probs_[static_cast<size_t>(a)] > probs_[static_cast<size_t>(b)];
  });
  // The most probable tokens until their share reaches top_p (at least one).
  size_t kept = 0;
  double mass = 0;
  while (kept < v && (kept == 0 || mass < options_.top_p * total))
    mass += probs_[static_cast<size_t>(order_[kept++])];
  const double target = uniform(rng_) * mass;
  double cumulative = 0;
  for (size_t i = 0; i < kept; ++i) {
    cumulative += probs_[static_cast<size_t>(order_[i])];
    if (target < cumulative) return order_[i];
  }
  return order_[kept - 1];
}

}  // namespace zt::nn
