// A token file of pseudo-random tokens for training tests (one document, xorshift64 from a seed),
// shared by the one-process trainer tests and the multi-rank ones.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <vector>

#include "zerotrain/data/token_file.h"

namespace zt::test {

// Writes `count` tokens below `vocab` to `path`; the same seed gives the same file.
inline void write_random_tokens(const std::filesystem::path& path, int64_t vocab, size_t count,
                                uint64_t seed) {
  std::vector<uint32_t> tokens(count);
  uint64_t x = seed;
  for (uint32_t& t : tokens) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    t = static_cast<uint32_t>(x % static_cast<uint64_t>(vocab));
  }
  data::TokenFileWriter writer(path, static_cast<uint64_t>(vocab), std::nullopt);
  writer.write_document(tokens);
  writer.finish();
}

}  // namespace zt::test
