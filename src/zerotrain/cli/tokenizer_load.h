// A tokenizer loaded for a command, with its one warning line on stderr when tokenizer.json lists
// added tokens of empty content: `tokenizers` leaves those out silently, and so does the encoding
// here (to stay equal to it), but the user is told. Tested by
// tests/data/test_tokenizer_added_tokens.cpp (the ids).
#pragma once

#include <filesystem>

#include "zerotrain/data/tokenizer.h"

namespace zt::cli {

data::Tokenizer load_tokenizer(const std::filesystem::path& file);

}  // namespace zt::cli
