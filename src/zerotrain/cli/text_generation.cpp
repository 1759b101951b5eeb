// Text generation shared by `generate` and train's sample (see text_generation.h).
#include "zerotrain/cli/text_generation.h"

#include <iostream>

#include "zerotrain/cli/tokenizer_load.h"
#include "zerotrain/core/error.h"
#include "zerotrain/core/json_util.h"
#include "zerotrain/core/stream.h"
#include "zerotrain/data/decode_stream.h"
#include "zerotrain/data/tokenizer.h"
#include "zerotrain/io/generation_config.h"
#include "zerotrain/io/hf_config.h"
#include "zerotrain/io/hf_model.h"
#include "zerotrain/io/model_source.h"
#include "zerotrain/nn/cached_decoder.h"
#include "zerotrain/nn/transformer.h"

namespace zt::cli {

namespace {

// The prompt's ids: the tokenizer's leading special tokens, then the text's tokens.
std::vector<int64_t> prompt_ids(const data::Tokenizer& tokenizer,
                                const std::filesystem::path& tokenizer_file,
                                const std::string& prompt, const nn::ModelConfig& config) {
  std::vector<int64_t> ids = io::read_prompt_prefix_ids(tokenizer_file, config.bos_token_id);
  for (uint32_t id : tokenizer.encode(prompt))
    ids.push_back(id);
  if (ids.empty() && config.bos_token_id >= 0) ids.push_back(config.bos_token_id);
  if (ids.empty())
    throw ValueError("generate", str("the prompt ", quote_excerpt(prompt),
                                     " encodes to no tokens and the model has no bos_token_id "
                                     "to start from"));
  return ids;
}

}  // namespace

std::filesystem::path tokenizer_beside(const std::filesystem::path& model) {
  const std::filesystem::path dir =
      std::filesystem::is_directory(model) ? model : model.parent_path();
  const std::filesystem::path file = dir / "tokenizer.json";
  return std::filesystem::is_regular_file(file) ? file : std::filesystem::path{};
}

nn::GenerationResult generate_text(const TextGenerationRequest& r, std::FILE* out) {
  const io::ModelSource source = io::resolve_model_source(r.model, io::ModelInit::pretrained);
  const std::filesystem::path tokenizer_file =
      r.tokenizer.empty() ? source.weights / "tokenizer.json" : r.tokenizer;
  if (!std::filesystem::is_regular_file(tokenizer_file))
    throw ValueError("generate", str("no tokenizer ", tokenizer_file.string(),
                                     " (name one with --tokenizer FILE)"));
  const data::Tokenizer tokenizer = load_tokenizer(tokenizer_file);
  const nn::ModelConfig config = io::read_hf_config(source.config);

  nn::TransformerOptions options;
  options.param_dtype = r.dtype;
  options.grad_dtype = r.dtype;
  options.device = r.device;
  options.allocate_grads = false;
  nn::Transformer model(config, options);
  io::load_pretrained(model, source.weights, Stream{}, &std::cerr);
  nn::CachedDecoder decoder(config);
  decoder.use_values_of(model);

  nn::GenerationOptions generation = r.generation;
  generation.stop_ids = io::read_eos_token_ids(source.weights);
  if (generation.stop_ids.empty() && config.eos_token_id >= 0)
    generation.stop_ids.push_back(config.eos_token_id);
  const std::vector<int64_t> prompt = prompt_ids(tokenizer, tokenizer_file, r.prompt, config);

  data::DecodeStream text(tokenizer, true, io::read_clean_up_tokenization_spaces(tokenizer_file));
  auto print = [out](const std::string& piece) {
    if (piece.empty()) return;
    std::fwrite(piece.data(), 1, piece.size(), out);
    std::fflush(out);
  };
  nn::GenerationResult result = nn::generate(
      decoder, prompt, generation,
      [&](int64_t token) {
        // An id past the tokenizer's vocabulary (a padded embedding) has no text, as in
        // transformers' decode.
        if (static_cast<uint64_t>(token) < tokenizer.vocab_size())
          print(text.push(static_cast<uint32_t>(token)));
      },
      Stream{});
  print(text.finish());
  return result;
}

}  // namespace zt::cli
