// Parallel document encoding (and JSON Lines record parsing) into a TokenFileWriter, chunk by
// chunk, in input order.
#include "zerotrain/data/token_file_prepare.h"

#include "zerotrain/data/chat_record.h"

#include <fcntl.h>
#include <omp.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <exception>
#include <memory>

namespace zt::data {
namespace {

// A whole input file, memory-mapped read-only (an empty file maps to an empty view).
class MappedText {
 public:
  explicit MappedText(const std::filesystem::path& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw DataInputError(str("input file ", path.string(), ": ", std::strerror(errno)));
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
      ::close(fd);
      throw DataInputError(str("input file ", path.string(), ": not a regular file"));
    }
    size_ = static_cast<size_t>(st.st_size);
    if (size_ > 0) {
      data_ = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
      if (data_ == MAP_FAILED) {
        const int err = errno;
        ::close(fd);
        throw DataInputError(
            str("input file ", path.string(), ": cannot map: ", std::strerror(err)));
      }
      ::madvise(data_, size_, MADV_SEQUENTIAL);
    }
    ::close(fd);
  }
  ~MappedText() {
    if (size_ > 0) ::munmap(data_, size_);
  }
  MappedText(const MappedText&) = delete;
  MappedText& operator=(const MappedText&) = delete;

  std::string_view text() const {
    return size_ ? std::string_view(static_cast<const char*>(data_), size_) : std::string_view();
  }

 private:
  void* data_ = nullptr;
  size_t size_ = 0;
};

bool is_parquet(const std::filesystem::path& path) {
  if (path.extension() == ".parquet") return true;
  char magic[4] = {};
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const ssize_t n = ::read(fd, magic, sizeof magic);
  ::close(fd);
  return n == 4 && std::memcmp(magic, "PAR1", 4) == 0;
}

bool is_blank(std::string_view line) {
  return line.find_first_not_of(" \t\r") == std::string_view::npos;
}

// A document waiting to be encoded: text, or a JSON Lines record to be parsed first.
struct PendingDocument {
  std::string_view text;
  size_t input = 0;  // index into the inputs, and the record's line, to report a skipped record
  uint64_t line = 0;
};

// Documents waiting to be encoded, with the mappings that hold their text.
struct Chunk {
  std::vector<PendingDocument> docs;
  std::vector<std::shared_ptr<MappedText>> files;
  size_t bytes = 0;
};

// A file's documents and, for each, the end of the input bytes it stands for (progress counts
// every byte: a document stands for the text from the end of the previous one to its own end,
// the last one to the end of the file).
struct FileDocuments {
  std::vector<PendingDocument> docs;
  std::vector<size_t> ends;
};

FileDocuments file_documents(std::string_view text, size_t input, const PrepareOptions& options) {
  FileDocuments out;
  if (options.format == InputFormat::JsonLines) {
    for (const NumberedLine& line : split_records(text)) {
      out.docs.push_back({line.text, input, line.number});
      out.ends.push_back(static_cast<size_t>(line.text.data() - text.data()) + line.text.size());
    }
  } else {
    for (std::string_view doc : split_documents(text, options.split_on_blank_lines)) {
      out.docs.push_back({doc, input, 0});
      out.ends.push_back(static_cast<size_t>(doc.data() - text.data()) + doc.size());
    }
  }
  if (!out.ends.empty()) out.ends.back() = text.size();
  return out;
}

}  // namespace

uint64_t total_input_bytes(const std::vector<std::filesystem::path>& inputs) {
  uint64_t total = 0;
  for (const auto& path : inputs) {
    std::error_code ec;
    const auto status = std::filesystem::status(path, ec);
    if (ec || !std::filesystem::exists(status))
      throw DataInputError(str("input file ", path.string(), ": no such file"));
    if (!std::filesystem::is_regular_file(status))
      throw DataInputError(str("input file ", path.string(), ": not a regular file"));
    if (::access(path.c_str(), R_OK) != 0)
      throw DataInputError(str("input file ", path.string(), ": ", std::strerror(errno)));
    if (is_parquet(path))
      throw DataInputError(
          str("input file ", path.string(),
              ": Parquet is not supported: it needs Apache Arrow's C++ library, which Debian 12 "
              "does not package; convert it to JSON Lines, e.g. python3 -c \"import pandas; "
              "pandas.read_parquet('in.parquet').to_json('out.jsonl', orient='records', "
              "lines=True, force_ascii=False)\""));
    total += std::filesystem::file_size(path, ec);
  }
  return total;
}

std::vector<std::string_view> split_documents(std::string_view text, bool on_blank_lines) {
  if (!on_blank_lines) return {text};
  std::vector<std::string_view> docs;
  size_t doc_begin = std::string_view::npos, doc_end = 0;
  for (size_t pos = 0; pos < text.size();) {
    size_t eol = text.find('\n', pos);
    if (eol == std::string_view::npos) eol = text.size();
    if (is_blank(text.substr(pos, eol - pos))) {
      if (doc_begin != std::string_view::npos)
        docs.push_back(text.substr(doc_begin, doc_end - doc_begin));
      doc_begin = std::string_view::npos;
    } else {
      if (doc_begin == std::string_view::npos) doc_begin = pos;
      doc_end = eol;
    }
    pos = eol + 1;
  }
  if (doc_begin != std::string_view::npos)
    docs.push_back(text.substr(doc_begin, doc_end - doc_begin));
  return docs;
}

std::vector<NumberedLine> split_records(std::string_view text) {
  std::vector<NumberedLine> lines;
  uint64_t number = 0;
  for (size_t pos = 0; pos < text.size();) {
    size_t eol = text.find('\n', pos);
    if (eol == std::string_view::npos) eol = text.size();
    ++number;
    const std::string_view line = text.substr(pos, eol - pos);
    if (!is_blank(line)) lines.push_back({line, number});
    pos = eol + 1;
  }
  return lines;
}

PrepareSummary prepare_token_file(const Tokenizer& tokenizer, const PrepareOptions& options,
                                  const std::function<void(uint64_t)>& progress) {
  if (options.inputs.empty()) throw DataInputError("no input files");
  if (options.format == InputFormat::JsonLines) {
    const JsonlFields& f = options.fields;
    const bool pair = !f.prompt.empty() && !f.completion.empty();
    const bool by_text = !f.text.empty() && f.prompt.empty() && f.completion.empty() &&
                         f.messages.empty();
    const bool by_pair = f.text.empty() && pair && f.messages.empty();
    const bool by_messages = f.text.empty() && f.prompt.empty() && f.completion.empty() &&
                             !f.messages.empty();
    if (!by_text && !by_pair && !by_messages)
      throw DataInputError(
          str("JSON Lines input needs a text field, a prompt and a completion field, or a "
              "messages field, got text \"",
              f.text, "\", prompt \"", f.prompt, "\", completion \"", f.completion,
              "\", messages \"", f.messages, "\""));
    if ((by_messages || options.pairs_through_template) && !options.chat_template)
      throw DataInputError(str("chat records are rendered through the model's chat template: ",
                               options.no_chat_template_reason));
    if (options.split_on_blank_lines)
      throw DataInputError("split_on_blank_lines applies to text input, not to JSON Lines");
  }
  PrepareSummary summary;
  summary.input_bytes = total_input_bytes(options.inputs);
  std::string first_skipped;  // where and why the first malformed record was skipped

  std::optional<uint32_t> eos;
  if (options.append_eos) {
    eos = tokenizer.token_to_id(options.eos_token);
    if (!eos)
      throw TokenizerError(str(tokenizer.source(), ": the eos token \"", options.eos_token,
                               "\" is not in the vocabulary"));
  }
  const bool masked = options.format == InputFormat::JsonLines && options.fields.text.empty();
  TokenFileWriter writer(options.output, tokenizer.vocab_size(), eos, masked);
  ChatRecordOptions chat;
  chat.fields = options.fields;
  chat.chat_template = options.chat_template;
  chat.template_variables = options.template_variables;
  chat.pairs_through_template = options.pairs_through_template;
  chat.no_chat_template_reason = options.no_chat_template_reason;

  const int threads = options.threads > 0 ? options.threads : omp_get_max_threads();
  std::vector<BpeCache> caches(static_cast<size_t>(threads));
  uint64_t bytes_before_chunk = 0;

  const bool jsonl = options.format == InputFormat::JsonLines;
  auto encode_chunk = [&](Chunk& chunk) {
    const auto n = static_cast<int64_t>(chunk.docs.size());
    std::vector<std::vector<uint32_t>> ids(chunk.docs.size());
    std::vector<std::vector<uint8_t>> counts(masked ? chunk.docs.size() : 0);
    std::vector<std::string> skipped(jsonl ? chunk.docs.size() : 0);  // why, for each record
    std::atomic<uint64_t> done{0};
    std::exception_ptr error;
#pragma omp parallel num_threads(threads)
    {
      BpeCache& cache = caches[static_cast<size_t>(omp_get_thread_num())];
#pragma omp for schedule(dynamic, 1)
      for (int64_t i = 0; i < n; ++i) {
        // Exceptions must not leave the parallel region: the first one is kept and rethrown.
        try {
          const std::string_view raw = chunk.docs[i].text;
          if (masked) {
            MaskedRecord record = masked_record(raw, chat, tokenizer, cache);
            if (record.error.empty()) {
              ids[i] = std::move(record.tokens);
              counts[i] = std::move(record.counts);
            } else {
              skipped[i] = std::move(record.error);
            }
          } else if (jsonl) {
            RecordText record = jsonl_record_text(raw, options.fields);
            if (record.text)
              tokenizer.encode(*record.text, ids[i], cache);
            else
              skipped[i] = std::move(record.error);
          } else {
            tokenizer.encode(raw, ids[i], cache);
          }
          const uint64_t d = done.fetch_add(raw.size()) + raw.size();
          if (progress && omp_get_thread_num() == 0)
            progress(bytes_before_chunk + std::min<uint64_t>(d, chunk.bytes));
        } catch (...) {
#pragma omp critical(zt_prepare_error)
          if (!error) error = std::current_exception();
        }
      }
    }
    if (error) std::rethrow_exception(error);
    for (size_t i = 0; i < ids.size(); ++i) {
      if (jsonl && !skipped[i].empty()) {
        ++summary.skipped_records;
        const PendingDocument& doc = chunk.docs[i];
        const std::string where =
            str(options.inputs[doc.input].string(), ":", doc.line, ": ", skipped[i]);
        if (first_skipped.empty()) first_skipped = where;
        if (options.report_skipped) options.report_skipped(where);
        continue;
      }
      if (masked) {
        writer.write_document(ids[i], counts[i]);
      } else {
        writer.write_document(ids[i]);
      }
    }
    bytes_before_chunk += chunk.bytes;
    if (progress) progress(bytes_before_chunk);
    chunk = Chunk{};
  };

  Chunk chunk;
  for (size_t input = 0; input < options.inputs.size(); ++input) {
    auto file = std::make_shared<MappedText>(options.inputs[input]);
    const std::string_view text = file->text();
    chunk.files.push_back(file);
    const FileDocuments docs = file_documents(text, input, options);
    size_t accounted = 0;
    for (size_t d = 0; d < docs.docs.size(); ++d) {
      chunk.docs.push_back(docs.docs[d]);
      chunk.bytes += docs.ends[d] - accounted;
      accounted = docs.ends[d];
      if (chunk.bytes >= options.chunk_bytes) {
        encode_chunk(chunk);
        chunk.files.push_back(file);
      }
    }
    chunk.bytes += text.size() - accounted;  // a file without documents (all blank)
  }
  if (!chunk.docs.empty() || chunk.bytes > 0) encode_chunk(chunk);

  // Records that were all malformed leave nothing to train on: an error, and no output file.
  if (writer.header().num_documents == 0 && summary.skipped_records > 0)
    throw ValueError("data", str("every record was skipped as malformed (", summary.skipped_records,
                                 " of ", summary.skipped_records, "); the first: ", first_skipped));
  summary.header = writer.finish();
  summary.documents = summary.header.num_documents;
  summary.target_tokens = writer.target_tokens();
  summary.tokens = summary.header.num_tokens;
  return summary;
}

}  // namespace zt::data
