// Text generation over a CachedDecoder: the prompt in one prefill, then one token at a time, each
// picked by a TokenSampler from the last position's logits and fed back, until a stop token (the
// model's eos ids, kept in the output as Hugging Face's generate keeps them) or max_new_tokens.
// Tested by tests/nn/test_generation.cpp and, against transformers' generate, by
// tools/parity/check_generate.py.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "zerotrain/nn/cached_decoder.h"
#include "zerotrain/nn/token_sampler.h"

namespace zt::nn {

struct GenerationOptions {
  int64_t max_new_tokens = 64;
  SamplingOptions sampling;
  std::vector<int64_t> stop_ids;  // eos ids; empty: only max_new_tokens stops
};

struct GenerationResult {
  std::vector<int64_t> tokens;  // the new tokens (a stop token last when one was picked)
  bool stopped = false;         // a stop token ended it
  double prefill_seconds = 0;   // the prompt's forward and the first token
  double decode_seconds = 0;    // every later token
};

// prompt: at least one token id. on_token runs for each new token as soon as it is picked.
GenerationResult generate(CachedDecoder& model, const std::vector<int64_t>& prompt,
                          const GenerationOptions& options,
                          const std::function<void(int64_t)>& on_token = {}, Stream stream = {});

}  // namespace zt::nn
