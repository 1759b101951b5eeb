// Parallel document encoding into a TokenFileWriter, chunk by chunk, in input order.
#include "zerotrain/data/token_file_prepare.h"

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

bool is_blank(std::string_view line) {
  return line.find_first_not_of(" \t\r") == std::string_view::npos;
}

// Documents waiting to be encoded, with the mappings that hold their text.
struct Chunk {
  std::vector<std::string_view> docs;
  std::vector<std::shared_ptr<MappedText>> files;
  size_t bytes = 0;
};

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

PrepareSummary prepare_token_file(const Tokenizer& tokenizer, const PrepareOptions& options,
                                  const std::function<void(uint64_t)>& progress) {
  if (options.inputs.empty()) throw DataInputError("no input files");
  PrepareSummary summary;
  summary.input_bytes = total_input_bytes(options.inputs);

  std::optional<uint32_t> eos;
  if (options.append_eos) {
    eos = tokenizer.token_to_id(options.eos_token);
    if (!eos)
      throw TokenizerError(str(tokenizer.source(), ": the eos token \"", options.eos_token,
                               "\" is not in the vocabulary"));
  }
  TokenFileWriter writer(options.output, tokenizer.vocab_size(), eos);

  const int threads = options.threads > 0 ? options.threads : omp_get_max_threads();
  std::vector<BpeCache> caches(static_cast<size_t>(threads));
  uint64_t bytes_before_chunk = 0;

  auto encode_chunk = [&](Chunk& chunk) {
    const auto n = static_cast<int64_t>(chunk.docs.size());
    std::vector<std::vector<uint32_t>> ids(chunk.docs.size());
    std::atomic<uint64_t> done{0};
    std::exception_ptr error;
#pragma omp parallel num_threads(threads)
    {
      BpeCache& cache = caches[static_cast<size_t>(omp_get_thread_num())];
#pragma omp for schedule(dynamic, 1)
      for (int64_t i = 0; i < n; ++i) {
        // Exceptions must not leave the parallel region: the first one is kept and rethrown.
        try {
          tokenizer.encode(chunk.docs[i], ids[i], cache);
          const uint64_t d = done.fetch_add(chunk.docs[i].size()) + chunk.docs[i].size();
          if (progress && omp_get_thread_num() == 0)
            progress(bytes_before_chunk + std::min<uint64_t>(d, chunk.bytes));
        } catch (...) {
#pragma omp critical(zt_prepare_error)
          if (!error) error = std::current_exception();
        }
      }
    }
    if (error) std::rethrow_exception(error);
    for (const auto& doc : ids)
      writer.write_document(doc);
    bytes_before_chunk += chunk.bytes;
    if (progress) progress(bytes_before_chunk);
    chunk = Chunk{};
  };

  Chunk chunk;
  for (const auto& path : options.inputs) {
    auto file = std::make_shared<MappedText>(path);
    const std::string_view text = file->text();
    chunk.files.push_back(file);
    // Progress counts every byte of the file: a document stands for the text from the end of the
    // previous one to its own end (the last one to the end of the file).
    const std::vector<std::string_view> docs = split_documents(text, options.split_on_blank_lines);
    size_t accounted = 0;
    for (size_t d = 0; d < docs.size(); ++d) {
      const size_t end = d + 1 == docs.size()
                             ? text.size()
                             : static_cast<size_t>(docs[d].data() - text.data()) + docs[d].size();
      chunk.docs.push_back(docs[d]);
      chunk.bytes += end - accounted;
      accounted = end;
      if (chunk.bytes >= options.chunk_bytes) {
        encode_chunk(chunk);
        chunk.files.push_back(file);
      }
    }
    chunk.bytes += text.size() - accounted;  // a file without documents (all blank)
  }
  if (!chunk.docs.empty() || chunk.bytes > 0) encode_chunk(chunk);

  summary.header = writer.finish();
  summary.documents = summary.header.num_documents;
  summary.tokens = summary.header.num_tokens;
  return summary;
}

}  // namespace zt::data
