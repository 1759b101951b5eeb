// libFuzzer target: a tokenizer.json through data::Tokenizer::from_json (both families: byte-level
// BPE and SentencePiece-style BPE; vocabulary ids, merges, added tokens, pipeline stages) and, when
// it loads, a few texts encoded and decoded with it. Any input must load or throw a zt::Error, and
// every id encode gives must be below the tokenizer's vocab_size. See docs/fuzzing.md.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "zerotrain/core/error.h"
#include "zerotrain/data/tokenizer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const zt::data::Tokenizer tok = zt::data::Tokenizer::from_json(text, "fuzz/tokenizer.json");
    for (std::string_view sample :
         {std::string_view("Hello world! <|endoftext|> 12 345"), std::string_view(" \t\n  a"),
          std::string_view("\xc3\xa9t\xc3\xa9 \xe2\x96\x81 \xf0\x9f\x98\x80 [INST] x"),
          std::string_view("\xff\xfe invalid \xc3")}) {
      const std::vector<uint32_t> ids = tok.encode(sample);
      for (uint32_t id : ids)
        if (id >= tok.vocab_size()) std::abort();
      tok.decode(ids);
      tok.decode(ids, true);
    }
  } catch (const zt::Error&) {
  }
  return 0;
}
