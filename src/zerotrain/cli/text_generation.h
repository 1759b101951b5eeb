// What `zerotrain generate` and the sample at the end of `zerotrain train` share: load a Hugging
// Face model directory onto a device, tokenize a prompt as transformers does (the tokenizer's
// leading special tokens, io/generation_config.h), generate with a KV cache (nn/generation.h) and
// print the new text to a stream as each token comes (data/decode_stream.h). Tested by the
// generate_* ctests (tests/CMakeLists.txt) and tools/parity/check_generate.py.
#pragma once

#include <cstdio>
#include <filesystem>
#include <string>

#include "zerotrain/core/device.h"
#include "zerotrain/core/dtype.h"
#include "zerotrain/nn/generation.h"

namespace zt::cli {

struct TextGenerationRequest {
  std::filesystem::path model;      // a model directory with weights
  std::filesystem::path tokenizer;  // empty: <model>/tokenizer.json
  std::string prompt;
  nn::GenerationOptions generation;  // stop_ids filled from the model directory
  Device device = Device::cpu();
  DType dtype = DType::f32;
};

// Streams the generated text (special tokens left out) to `out`, flushing after each piece.
// Errors: zt errors naming what failed (a missing tokenizer.json, weights, a prompt that encodes
// to nothing in a model without a bos token).
nn::GenerationResult generate_text(const TextGenerationRequest& request, std::FILE* out);

// The tokenizer.json a model path (a directory or a config.json) carries beside its config, or
// empty.
std::filesystem::path tokenizer_beside(const std::filesystem::path& model);

}  // namespace zt::cli
