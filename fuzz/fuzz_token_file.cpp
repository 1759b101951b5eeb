// libFuzzer target: a token file (.bin). The input is written to a file and opened by
// data::TokenFile (the 64-byte header: magic, version, token width, vocab_size, counts, header
// size, eos id against the file's size), then every id is checked against the vocabulary
// (TokenFile::check_tokens, and a version 2 file's flags) and the first tokens (and flags) are
// read. Any input must open or throw a zt::Error. See docs/fuzzing.md.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <vector>

#include "fuzz_scratch.h"
#include "zerotrain/core/error.h"
#include "zerotrain/data/token_file.h"

namespace {
std::filesystem::path g_file;
}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  g_file = zt::fuzz::scratch_path("zt-fuzz-tokens", ".bin");
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  zt::fuzz::write_input(g_file, data, size);
  try {
    const zt::data::TokenFile tokens(g_file);
    tokens.check_tokens(4096);
    const uint64_t n = std::min<uint64_t>(tokens.size(), 64);
    std::vector<int32_t> out(n);
    tokens.read(0, n, out.data());
    for (int32_t id : out)
      if (id < 0 || static_cast<uint64_t>(id) >= tokens.vocab_size()) std::abort();
    if (tokens.has_flags()) {
      std::vector<uint8_t> flags(n);
      tokens.read_flags(0, n, flags.data());
      for (uint8_t f : flags)
        if (f & ~zt::data::kTokenKnownFlags) std::abort();  // check_tokens let it through
    }
  } catch (const zt::Error&) {
  }
  return 0;
}
