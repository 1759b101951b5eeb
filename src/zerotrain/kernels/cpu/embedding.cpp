// CPU token embedding: row copies in parallel over tokens; the gradient follows
// [Note: embedding gradient order] (stable sort by id, chunked sums), in parallel over ids.
// Tested by tests/kernels/test_embedding.cpp.
#include "zerotrain/kernels/cpu/embedding.h"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <vector>

#include "zerotrain/kernels/cpu/float_types.h"
#include "zerotrain/kernels/embedding_order.h"

namespace zt::kernels::cpu {

namespace {

int64_t first_bad(const std::vector<int64_t>& ids, int64_t V) {
  for (size_t i = 0; i < ids.size(); ++i)
    if (ids[i] < 0 || ids[i] >= V) return static_cast<int64_t>(i);
  return -1;
}

// dtable rows (G) += chunked sums of dout rows (T) per id; `order`: token indices stably sorted by
// id.
template <typename T, typename G>
void scatter_add(const std::vector<int64_t>& ids, const std::vector<int64_t>& order, const T* dout,
                 G* dtable, int64_t cols) {
  const int64_t n = static_cast<int64_t>(order.size()), L = kEmbeddingGradChunk;
  std::vector<int64_t> starts;  // first sorted position of each run of equal ids
  for (int64_t p = 0; p < n; ++p)
    if (p == 0 || ids[order[p]] != ids[order[p - 1]]) starts.push_back(p);
  starts.push_back(n);
  const int64_t runs = static_cast<int64_t>(starts.size()) - 1;
#pragma omp parallel
  {
    std::vector<float> total(static_cast<size_t>(cols)), piece(static_cast<size_t>(cols));
#pragma omp for schedule(dynamic, 16)
    for (int64_t r = 0; r < runs; ++r) {
      const int64_t rs = starts[r], re = starts[r + 1];
      std::fill(total.begin(), total.end(), 0.0f);
      for (int64_t ps = rs; ps < re;) {
        const int64_t pe = std::min(re, (ps / L + 1) * L);  // this piece ends at a chunk boundary
        std::fill(piece.begin(), piece.end(), 0.0f);
        for (int64_t p = ps; p < pe; ++p) {
          const T* row = dout + order[p] * cols;
          for (int64_t c = 0; c < cols; ++c)
            piece[c] += static_cast<float>(row[c]);
        }
        for (int64_t c = 0; c < cols; ++c)
          total[c] += piece[c];
        ps = pe;
      }
      G* dst = dtable + ids[order[rs]] * cols;
      for (int64_t c = 0; c < cols; ++c)
        dst[c] = G(static_cast<float>(dst[c]) + total[c]);
    }
  }
}

}  // namespace

int64_t embedding_forward(const Tensor& ids, const Tensor& table, Tensor& out) {
  const std::vector<int64_t> id = ids.to_ints();
  const int64_t n = ids.size(0), V = table.size(0);
  const size_t row_bytes = static_cast<size_t>(table.size(1)) * table.element_size();
  const auto* src = static_cast<const char*>(table.data());
  auto* dst = static_cast<char*>(out.data());
#pragma omp parallel for schedule(static)
  for (int64_t t = 0; t < n; ++t) {
    const int64_t i = id[static_cast<size_t>(t)];
    char* o = dst + static_cast<size_t>(t) * row_bytes;
    if (i >= 0 && i < V)
      std::memcpy(o, src + static_cast<size_t>(i) * row_bytes, row_bytes);
    else
      std::memset(o, 0, row_bytes);
  }
  return first_bad(id, V);
}

int64_t embedding_backward(const Tensor& ids, const Tensor& dout, Tensor& dtable) {
  const std::vector<int64_t> id = ids.to_ints();
  const int64_t bad = first_bad(id, dtable.size(0));
  if (bad >= 0) return bad;
  std::vector<int64_t> order(id.size());
  std::iota(order.begin(), order.end(), int64_t{0});
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return id[a] < id[b]; });
  visit_float(dout.dtype(), "embedding_backward", [&](auto ttag) {
    using T = decltype(ttag);
    const T* src = static_cast<const T*>(dout.data());
    if (dtable.dtype() == DType::f32)
      scatter_add(id, order, src, dtable.data_as<float>(), dtable.size(1));
    else
      scatter_add(id, order, src, static_cast<T*>(dtable.data()), dtable.size(1));
  });
  return -1;
}

}  // namespace zt::kernels::cpu
