// `zerotrain data prepare` as a library call: text files -> one token file. Each input file is a
// document, or each blank-line separated block of it with split_on_blank_lines. Documents are
// encoded in parallel (OpenMP, one BpeCache per thread) in chunks of about chunk_bytes of text and
// written in input order, so the output does not depend on the thread count.
// Tested in tests/data_pipeline/test_token_file_prepare.cpp.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "zerotrain/core/error.h"
#include "zerotrain/data/token_file.h"
#include "zerotrain/data/tokenizer.h"

namespace zt::data {

// An input text file that cannot be read; the message names it.
class DataInputError : public Error {
 public:
  explicit DataInputError(const std::string& message) : Error("data", message) {}
};

struct PrepareOptions {
  std::vector<std::filesystem::path> inputs;
  std::filesystem::path output;
  bool append_eos = false;  // end every document with eos_token
  std::string eos_token = "<|endoftext|>";
  bool split_on_blank_lines = false;     // documents are blocks separated by blank lines
  int threads = 0;                       // 0: OpenMP's default
  size_t chunk_bytes = size_t{8} << 20;  // text encoded per parallel round
};

struct PrepareSummary {
  uint64_t documents = 0;
  uint64_t tokens = 0;  // eos tokens included
  uint64_t input_bytes = 0;
  TokenFileHeader header;
};

// Bytes of all inputs; throws DataInputError for a missing or unreadable file.
uint64_t total_input_bytes(const std::vector<std::filesystem::path>& inputs);

// Splits `text` into documents: the whole text, or the blocks of lines between blank lines (lines
// of only spaces, tabs and carriage returns), each without its final line break.
std::vector<std::string_view> split_documents(std::string_view text, bool on_blank_lines);

// Encodes the inputs into options.output. `progress(bytes_done)` is called from the calling thread.
PrepareSummary prepare_token_file(const Tokenizer& tokenizer, const PrepareOptions& options,
                                  const std::function<void(uint64_t)>& progress = {});

}  // namespace zt::data
