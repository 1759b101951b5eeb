// libFuzzer target: a token file (.bin). The input is written to a file and opened by
// data::TokenFile (the 64-byte header: magic, version, token width, vocab_size, counts, header
// size, eos id against the file's size), then every id is checked against the vocabulary
// (TokenFile::check_tokens, and a version 2 file's flags) and the first tokens (and flags) are
// read. Any input must open or throw a zt::Error. See docs/fuzzing.md.
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "zerotrain/core/error.h"
#include "zerotrain/data/token_file.h"

namespace {
std::filesystem::path g_file;
}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  const char* tmp = std::getenv("TMPDIR");
  g_file = std::filesystem::path(tmp ? tmp : "/tmp") /
           ("zt-fuzz-tokens-" + std::to_string(::getpid()) + ".bin");
  std::atexit([] {
    std::error_code ec;
    std::filesystem::remove(g_file, ec);
  });
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  {
    std::ofstream out(g_file, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
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
