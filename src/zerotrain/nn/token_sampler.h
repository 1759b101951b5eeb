// Picks the next token from one position's logits, as Hugging Face's generate does without
// sampling (greedy: the first index of the largest logit) or with do_sample, temperature and
// top_p (logits / temperature, softmax, the smallest set of most probable tokens whose
// probability reaches top_p, one draw from it renormalized). The draws come from a seeded
// generator of its own: the same seed gives the same tokens (not torch's random stream).
// Tested by tests/nn/test_token_sampler.cpp.
#pragma once

#include <cstdint>
#include <random>
#include <span>
#include <vector>

namespace zt::nn {

struct SamplingOptions {
  double temperature = 0.0;  // 0: greedy; > 0: sample
  double top_p = 1.0;        // in (0, 1]; 1 keeps every token
  uint64_t seed = 0;
};

class TokenSampler {
 public:
  // ValueError naming the option for a negative or non-finite temperature or top_p outside (0, 1].
  explicit TokenSampler(const SamplingOptions& options);

  int64_t next(std::span<const float> logits);

 private:
  SamplingOptions options_;
  std::mt19937_64 rng_;
  std::vector<double> probs_;   // scratch [V]
  std::vector<int64_t> order_;  // scratch [V]
};

}  // namespace zt::nn
