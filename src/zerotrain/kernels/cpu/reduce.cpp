// CPU reductions: sum, max, column sums and the global L2 norm, accumulated in f64.
//
// [Note: deterministic CPU reductions]
// Work is cut into fixed chunks (kChunk elements, or kRowChunk rows for sum_rows) whose bounds
// depend only on the sizes, never on the thread count. Threads compute one partial per chunk into
// that chunk's own slot, each chunk summed in a fixed order (kLanes interleaved accumulators,
// folded pairwise); one thread then combines the partials in chunk order. So every OpenMP thread
// count gives bitwise the same result. Tested by tests/kernels/test_reduce.cpp, which compares the
// bits across omp_set_num_threads values.
#include "zerotrain/kernels/cpu/reduce.h"
#include "zerotrain/kernels/cpu/float_types.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

namespace zt::kernels::cpu {

namespace {

constexpr int64_t kChunk = int64_t{1} << 14;  // elements per partial
constexpr int64_t kRowChunk = 256;            // rows per partial in sum_rows
constexpr int64_t kColBlock = 256;            // columns per task in sum_rows
constexpr int kLanes = 8;                     // interleaved accumulators within a chunk

template <typename T>
double load_f64(const T* p, int64_t i) {
  return static_cast<double>(static_cast<float>(p[i]));
}

// sum of map(p[i]) for i in [0, n), in f64, in a fixed order.
template <typename T, typename Map>
double chunk_sum(const T* p, int64_t n, Map map) {
  double acc[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int l = 0; l < kLanes; ++l)
      acc[l] += map(load_f64(p, i + l));
  for (int l = 0; i < n; ++i, ++l)
    acc[l] += map(load_f64(p, i));
  for (int w = kLanes / 2; w > 0; w /= 2)
    for (int l = 0; l < w; ++l)
      acc[l] += acc[l + w];
  return acc[0];
}

// Largest element of p[0, n), NaN if any element is NaN.
template <typename T>
float chunk_max(const T* p, int64_t n) {
  float m = -std::numeric_limits<float>::infinity();
  bool nan = false;
  for (int64_t i = 0; i < n; ++i) {
    const float v = static_cast<float>(p[i]);
    nan = nan || std::isnan(v);
    m = v > m ? v : m;
  }
  return nan ? std::numeric_limits<float>::quiet_NaN() : m;
}

// f(begin, end) for every chunk [c * kChunk, min(n, (c + 1) * kChunk)), in parallel; the result
// holds the partials in chunk order.
template <typename F>
auto chunk_partials(int64_t n, F f) {
  const int64_t chunks = (n + kChunk - 1) / kChunk;
  std::vector<decltype(f(int64_t{0}, int64_t{0}))> partial(static_cast<size_t>(chunks));
#pragma omp parallel for schedule(static) if (chunks > 1)
  for (int64_t c = 0; c < chunks; ++c)
    partial[c] = f(c * kChunk, std::min(n, (c + 1) * kChunk));
  return partial;
}

double ordered_sum(const std::vector<double>& partial) {
  double s = 0;
  for (double v : partial)
    s += v;
  return s;
}

double identity(double v) {
  return v;
}
double square(double v) {
  return v * v;
}

template <typename T, typename O>
void sum_rows_typed(const T* x, int64_t M, int64_t N, O* out, bool accumulate) {
  const int64_t row_chunks = (M + kRowChunk - 1) / kRowChunk;
  const int64_t col_blocks = (N + kColBlock - 1) / kColBlock;
  std::vector<double> partial(static_cast<size_t>(row_chunks * N), 0.0);  // [row_chunks, N]
#pragma omp parallel for collapse(2) schedule(static) if (row_chunks * col_blocks > 1)
  for (int64_t rc = 0; rc < row_chunks; ++rc) {
    for (int64_t cb = 0; cb < col_blocks; ++cb) {
      const int64_t c0 = cb * kColBlock, c1 = std::min(N, c0 + kColBlock);
      double* acc = partial.data() + rc * N;
      for (int64_t r = rc * kRowChunk; r < std::min(M, (rc + 1) * kRowChunk); ++r) {
        const T* row = x + r * N;
        for (int64_t c = c0; c < c1; ++c)
          acc[c] += load_f64(row, c);
      }
    }
  }
#pragma omp parallel for schedule(static) if (N * row_chunks >= kChunk)
  for (int64_t c = 0; c < N; ++c) {
    double s = 0;
    for (int64_t rc = 0; rc < row_chunks; ++rc)
      s += partial[rc * N + c];
    if (accumulate) s = load_f64(out, c) + s;
    out[c] = O(static_cast<float>(s));
  }
}

}  // namespace

void sum(const Tensor& x, Tensor& out) {
  double total = 0;
  visit_float(x.dtype(), "reduce", [&](auto tag) {
    using T = decltype(tag);
    const T* p = static_cast<const T*>(x.data());
    total = ordered_sum(chunk_partials(
        x.numel(), [&](int64_t b, int64_t e) { return chunk_sum(p + b, e - b, identity); }));
  });
  static_cast<float*>(out.data())[0] = static_cast<float>(total);
}

void max(const Tensor& x, Tensor& out) {
  float m = -std::numeric_limits<float>::infinity();
  visit_float(x.dtype(), "reduce", [&](auto tag) {
    using T = decltype(tag);
    const T* p = static_cast<const T*>(x.data());
    for (float v :
         chunk_partials(x.numel(), [&](int64_t b, int64_t e) { return chunk_max(p + b, e - b); })) {
      if (std::isnan(v)) {
        m = v;
        break;
      }
      m = v > m ? v : m;
    }
  });
  static_cast<float*>(out.data())[0] = m;
}

void sum_rows(const Tensor& x, Tensor& out, bool accumulate) {
  const int64_t M = x.size(0), N = x.size(1);
  visit_float(x.dtype(), "reduce", [&](auto tag) {
    using T = decltype(tag);
    const T* p = static_cast<const T*>(x.data());
    if (out.dtype() == DType::f32)
      sum_rows_typed(p, M, N, static_cast<float*>(out.data()), accumulate);
    else
      sum_rows_typed(p, M, N, static_cast<T*>(out.data()), accumulate);
  });
}

void global_l2_norm(const std::vector<Tensor>& xs, Tensor& out) {
  struct Chunk {
    const Tensor* t;
    int64_t begin, end;
  };
  std::vector<Chunk> chunks;
  for (const Tensor& t : xs)
    for (int64_t b = 0; b < t.numel(); b += kChunk)
      chunks.push_back({&t, b, std::min(t.numel(), b + kChunk)});
  std::vector<double> partial(chunks.size());
#pragma omp parallel for schedule(static) if (chunks.size() > 1)
  for (size_t i = 0; i < chunks.size(); ++i) {
    const Chunk& c = chunks[i];
    visit_float(c.t->dtype(), "reduce", [&](auto tag) {
      using T = decltype(tag);
      partial[i] = chunk_sum(static_cast<const T*>(c.t->data()) + c.begin, c.end - c.begin, square);
    });
  }
  static_cast<float*>(out.data())[0] = static_cast<float>(std::sqrt(ordered_sum(partial)));
}

// Each chunk is one chunk_sum: element i always lands in lane i % kLanes, so trailing zeros add
// exact zeros and leave the partial unchanged.
void chunk_sum_squares(const Tensor& x, int64_t chunk, Tensor& out) {
  const int64_t n = x.numel();
  const int64_t chunks = (n + chunk - 1) / chunk;
  float* o = static_cast<float*>(out.data());
  visit_float(x.dtype(), "reduce", [&](auto tag) {
    using T = decltype(tag);
    const T* p = static_cast<const T*>(x.data());
#pragma omp parallel for schedule(static) if (chunks > 1)
    for (int64_t k = 0; k < chunks; ++k) {
      const int64_t b = k * chunk;
      o[k] = static_cast<float>(chunk_sum(p + b, std::min(n, b + chunk) - b, square));
    }
  });
}

}  // namespace zt::kernels::cpu
