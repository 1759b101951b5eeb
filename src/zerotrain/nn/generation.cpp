// Generation loop (see generation.h).
#include "zerotrain/nn/generation.h"

#include <algorithm>
#include <chrono>

#include "zerotrain/core/error.h"

namespace zt::nn {

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

GenerationResult generate(CachedDecoder& model, const std::vector<int64_t>& prompt,
                          const GenerationOptions& options,
                          const std::function<void(int64_t)>& on_token, Stream stream) {
  if (prompt.empty()) throw ValueError("generate", "the prompt holds no tokens");
  if (options.max_new_tokens < 0)
    throw ValueError("generate", str("max_new_tokens must be >= 0, got ", options.max_new_tokens));
  const int64_t vocab = model.config().vocab_size;
  for (int64_t id : prompt)
    if (id < 0 || id >= vocab)
      throw ValueError("generate",
                       str("prompt token ", id, " is outside the model's vocabulary of ", vocab));
  GenerationResult result;
  if (options.max_new_tokens == 0) return result;
  const auto n = static_cast<int64_t>(prompt.size());
  // The last new token is never fed back, so the sequence needs one position less.
  const int64_t positions = n + options.max_new_tokens - 1;
  if (const int64_t limit = model.position_limit(); limit > 0 && positions > limit)
    throw ValueError("generate", n > limit ? str("the prompt's ", n, " tokens exceed the model's ",
                                                 limit, " positions (max_position_embeddings)")
                                           : str("the prompt's ", n, " tokens + max_new_tokens ",
                                                 options.max_new_tokens, " need ", positions,
                                                 " positions, more than the model's ", limit,
                                                 " (max_position_embeddings): ask for at most ",
                                                 limit - n + 1, " new tokens"));
  TokenSampler sampler(options.sampling);
  // Past the model's positions (RoPE families have no hard limit) the KV cache is what bounds a
  // request: a refusal names max_new_tokens, not only the allocator's size.
  KvCache cache = [&] {
    try {
      return model.make_cache(1, positions, stream);
    } catch (const OutOfMemoryError& e) {
      throw OutOfMemoryError("generate", str("max_new_tokens ", options.max_new_tokens, " needs a KV "
                                             "cache of ", positions, " positions, which does not "
                                             "fit: ", e.what()));
    }
  }();
  const Device dev = cache.keys(0).device();
  auto start = std::chrono::steady_clock::now();
  Tensor input = Tensor::from_ints(prompt, {1, n}, DType::i32).to(dev, stream);
  while (true) {
    const std::vector<float> logits = model.forward(input, cache, true, stream).to_floats(stream);
    const int64_t token = sampler.next(logits);
    result.tokens.push_back(token);
    if (result.tokens.size() == 1) {
      result.prefill_seconds = seconds_since(start);
      start = std::chrono::steady_clock::now();
    }
    if (on_token) on_token(token);
    result.stopped = std::find(options.stop_ids.begin(), options.stop_ids.end(), token) !=
                     options.stop_ids.end();
    if (result.stopped || static_cast<int64_t>(result.tokens.size()) == options.max_new_tokens)
      break;
    input = Tensor::from_ints({token}, {1, 1}, DType::i32).to(dev, stream);
  }
  if (result.tokens.size() > 1) result.decode_seconds = seconds_since(start);
  return result;
}

}  // namespace zt::nn
