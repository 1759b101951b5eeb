// What Hugging Face's generate reads beside the weights to start and stop a generation: the ids
// that end it (generation_config.json's eos_token_id, else config.json's: an integer or a list)
// and the special tokens its tokenizer puts before a prompt (tokenizer.json's TemplateProcessing
// post-processor, e.g. Llama 2's "<s>", adjusted by tokenizer_config.json's add_bos_token as
// LlamaTokenizerFast does; none for byte-level post-processors such as GPT-2's and Qwen2's), and
// whether decoding cleans up spaces (tokenizer_config.json's clean_up_tokenization_spaces).
// Tested by tests/io/test_generation_config.cpp.
#pragma once

#include <cstdint>
#include <filesystem>
#include <vector>

namespace zt::io {

// The eos ids of the model directory `dir` (the directory holding config.json); empty when none
// is set. FormatError naming the file and key for a malformed value.
std::vector<int64_t> read_eos_token_ids(const std::filesystem::path& dir);

// The ids tokenizer(text) puts before the text with add_special_tokens (the post-processor's
// special tokens ahead of the sequence). `tokenizer_json`: the tokenizer.json; the
// tokenizer_config.json beside it, when present, may ask for bos_token_id (add_bos_token true)
// or drop it (false). FormatError naming the file and key for a malformed value.
std::vector<int64_t> read_prompt_prefix_ids(const std::filesystem::path& tokenizer_json,
                                            int64_t bos_token_id);

// tokenizer_config.json's clean_up_tokenization_spaces beside `tokenizer_json` (false when absent,
// transformers 4.46's default). FormatError for a value that is not a boolean.
bool read_clean_up_tokenization_spaces(const std::filesystem::path& tokenizer_json);

}  // namespace zt::io
