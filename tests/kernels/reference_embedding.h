// Float64 reference for the token embedding (kernels/embedding.h). Shared by test_embedding.cpp
// and test_embedding_cuda.cpp.
#pragma once

#include <cstdint>
#include <vector>

namespace zt::test {

// dtable [v, c] + scatter of dout [n, c] by ids, in float64.
inline std::vector<double> embedding_backward_ref(const std::vector<int64_t>& ids,
                                                  const std::vector<double>& dout,
                                                  std::vector<double> dtable, int64_t c) {
  for (size_t t = 0; t < ids.size(); ++t)
    for (int64_t j = 0; j < c; ++j)
      dtable[static_cast<size_t>(ids[t] * c + j)] +=
          dout[t * static_cast<size_t>(c) + static_cast<size_t>(j)];
  return dtable;
}

// Ids with heavy repetition: a run of one id long enough to cross several 64-token chunks, a few
// ids repeated a handful of times, the rest random in [0, v).
inline std::vector<int64_t> repeated_ids(int64_t n, int64_t v, uint64_t seed) {
  std::vector<int64_t> ids(static_cast<size_t>(n));
  uint64_t s = seed;
  auto next = [&s] {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    return s >> 33;
  };
  const int64_t heavy = static_cast<int64_t>(next() % static_cast<uint64_t>(v));
  for (auto& id : ids) {
    const uint64_t k = next() % 8;
    if (k < 3)
      id = heavy;
    else if (k < 5)
      id = static_cast<int64_t>(next() % 4) % v;
    else
      id = static_cast<int64_t>(next() % static_cast<uint64_t>(v));
  }
  return ids;
}

}  // namespace zt::test
