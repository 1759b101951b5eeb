// libFuzzer target: any text encoded with the repository's two fixture tokenizers (byte-level BPE,
// tests/fixtures/tokenizer/small_bpe; SentencePiece-style BPE with byte fallback, sp_bpe), loaded
// once. Every id must be below vocab_size, and decoding the ids must not fail.
// ZT_FUZZ_TOKENIZER_DIR names tests/fixtures/tokenizer (set by the build; the environment variable
// of that name overrides it).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "zerotrain/core/error.h"
#include "zerotrain/data/tokenizer.h"

namespace {

std::unique_ptr<zt::data::Tokenizer> g_byte_level;
std::unique_ptr<zt::data::Tokenizer> g_sentencepiece;

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  const char* env = std::getenv("ZT_FUZZ_TOKENIZER_DIR");  // another checkout's, when moved
  const std::string dir = env ? env : ZT_FUZZ_TOKENIZER_DIR;
  g_byte_level = std::make_unique<zt::data::Tokenizer>(
      zt::data::Tokenizer::from_file(dir + "/small_bpe/tokenizer.json"));
  g_sentencepiece = std::make_unique<zt::data::Tokenizer>(
      zt::data::Tokenizer::from_file(dir + "/sp_bpe/tokenizer.json"));
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  for (const zt::data::Tokenizer* tok : {g_byte_level.get(), g_sentencepiece.get()}) {
    const std::vector<uint32_t> ids = tok->encode(text);
    for (uint32_t id : ids)
      if (id >= tok->vocab_size()) std::abort();
    tok->decode(ids);
    tok->decode(ids, true);
  }
  return 0;
}
