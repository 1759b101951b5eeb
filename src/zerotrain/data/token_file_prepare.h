// `zerotrain data prepare` as a library call: text or JSON Lines files -> one token file. A text
// file is a document, or each blank-line separated block of it with split_on_blank_lines; a JSON
// Lines file gives one document per record (its text field, jsonl_record.h; or an instruction or
// chat record, chat_record.h: prompt + completion, or a list of messages rendered through the
// chat template, with a loss mask, written as a version 2 token file; blank lines are ignored, a
// malformed record is skipped and reported with its line number).
// Documents are encoded (and records parsed) in parallel (OpenMP, one BpeCache per thread) in
// chunks of about chunk_bytes of input and written, and skipped records reported, in input order,
// so the output does not depend on the thread count.
// Tested in tests/data/test_token_file_prepare.cpp and test_token_file_prepare_jsonl.cpp.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "zerotrain/core/error.h"
#include "zerotrain/data/chat_template.h"
#include "zerotrain/data/jsonl_record.h"
#include "zerotrain/data/token_file.h"
#include "zerotrain/data/tokenizer.h"

namespace zt::data {

// An input text file that cannot be read; the message names it.
class DataInputError : public Error {
 public:
  explicit DataInputError(const std::string& message) : Error("data", message) {}
};

enum class InputFormat { Text, JsonLines };

struct PrepareOptions {
  std::vector<std::filesystem::path> inputs;
  InputFormat format = InputFormat::Text;
  JsonlFields fields;  // JsonLines: where a record's text is (text; prompt + completion; messages)
  // Messages, and pairs with pairs_through_template: the model's chat template (not owned) and
  // the variables it is rendered with (bos_token, eos_token, ...).
  const ChatTemplate* chat_template = nullptr;
  ValueDict template_variables;
  bool pairs_through_template = false;
  // Why there is no chat template (e.g. "tok/tokenizer_config.json has no chat_template"), for
  // the error when the data needs one.
  std::string no_chat_template_reason = "no chat template was given";
  std::filesystem::path output;
  bool append_eos = false;  // end every document with eos_token
  std::string eos_token = "<|endoftext|>";
  bool split_on_blank_lines = false;     // documents are blocks separated by blank lines
  int threads = 0;                       // 0: OpenMP's default
  size_t chunk_bytes = size_t{8} << 20;  // text encoded per parallel round
  // JsonLines: called once per skipped record, in input order, from the calling thread, with
  // "<file>:<line>: <why>".
  std::function<void(const std::string&)> report_skipped;
};

struct PrepareSummary {
  uint64_t documents = 0;
  uint64_t skipped_records = 0;  // malformed JSON Lines records
  uint64_t tokens = 0;           // eos tokens included
  uint64_t target_tokens = 0;    // version 2: tokens that count as targets
  uint64_t input_bytes = 0;
  TokenFileHeader header;
};

// Bytes of all inputs; throws DataInputError for a missing or unreadable file, or a Parquet file
// (a .parquet name or the "PAR1" magic): Debian 12 packages no Apache Arrow C++ library, so
// zerotrain reads no Parquet (the message says how to convert it to JSON Lines).
uint64_t total_input_bytes(const std::vector<std::filesystem::path>& inputs);

// Splits `text` into documents: the whole text, or the blocks of lines between blank lines (lines
// of only spaces, tabs and carriage returns), each without its final line break.
std::vector<std::string_view> split_documents(std::string_view text, bool on_blank_lines);

// The lines of a JSON Lines text that are not blank, each without its line break, with its
// 1-based line number.
struct NumberedLine {
  std::string_view text;
  uint64_t number;
};
std::vector<NumberedLine> split_records(std::string_view text);

// Encodes the inputs into options.output. `progress(bytes_done)` is called from the calling thread.
PrepareSummary prepare_token_file(const Tokenizer& tokenizer, const PrepareOptions& options,
                                  const std::function<void(uint64_t)>& progress = {});

}  // namespace zt::data
