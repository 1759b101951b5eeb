// CUDA embedding gradient, deterministic, following [Note: embedding gradient order]:
//   1. keys = id (V for an out-of-range id, sorted last and skipped), values = token index;
//   2. CUB's stable radix sort of (key, token) pairs, over only the key bits V needs;
//   3. one block per (chunk of 64 sorted positions, column tile): each thread sums its column
//      pack over the chunk's rows in order, loading 8 rows ahead; a run inside the chunk is added
//      to its dtable row, a piece of a run that crosses a chunk edge goes to a scratch slot
//      (slot 2c for the piece starting the chunk, 2c + 1 for the one ending it);
//   4. for every run that crosses chunk edges, the block of its first chunk adds the run's slots
//      in order and adds the total to the dtable row.
// Rows of distinct ids are written by distinct threads: no atomics.
// Tested by tests/kernels/test_embedding_cuda.cpp.
#include <cub/device/device_radix_sort.cuh>

#include <algorithm>
#include <climits>

#include "zerotrain/core/cuda/cuda_check.h"
#include "zerotrain/kernels/cuda/embedding.h"
#include "zerotrain/kernels/cuda/float_packs.cuh"
#include "zerotrain/kernels/embedding_order.h"

namespace zt::kernels::cuda {

namespace {

using dev::load_pack;
using dev::store_pack;

constexpr int kChunk = static_cast<int>(kEmbeddingGradChunk);
constexpr int kAhead = 8;                 // rows loaded before they are added
constexpr int kThreads = 128;             // column packs per block
constexpr unsigned kNoKey = 0xffffffffu;  // beyond the sorted list (never a valid key: V < 2^31)

template <typename I>
__global__ void make_keys(const I* __restrict__ ids, int n, long long V,
                          unsigned* __restrict__ keys, unsigned* __restrict__ toks) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    const long long id = static_cast<long long>(ids[i]);
    keys[i] = static_cast<unsigned>(id >= 0 && id < V ? id : V);
    toks[i] = static_cast<unsigned>(i);
  }
}

// keys, toks: [n] sorted pairs; dout: [n, cols] T; dtable: [V, cols] G; slots: [2 * chunks, cols]
// f32. Block (blockIdx.x = chunk, blockIdx.y = column tile); each thread owns VEC columns.
template <typename T, typename G, int VEC>
__global__ void __launch_bounds__(kThreads)
    sum_chunks(const unsigned* __restrict__ keys, const unsigned* __restrict__ toks,
               const T* __restrict__ dout, G* __restrict__ dtable, float* __restrict__ slots, int n,
               unsigned V, int cols) {
  __shared__ unsigned skey[kChunk + 2];  // skey[j + 1] = key of chunk position j; edges: neighbours
  __shared__ unsigned stok[kChunk];
  const int chunk = blockIdx.x;
  const int cs = chunk * kChunk;
  const int len = min(n - cs, kChunk);
  for (int j = threadIdx.x; j < len; j += blockDim.x) {
    skey[j + 1] = keys[cs + j];
    stok[j] = toks[cs + j];
  }
  if (threadIdx.x == 0) {
    skey[0] = cs > 0 ? keys[cs - 1] : kNoKey;
    skey[len + 1] = cs + len < n ? keys[cs + len] : kNoKey;
  }
  __syncthreads();
  const int pack = blockIdx.y * blockDim.x + threadIdx.x;
  if (pack >= cols / VEC) return;
  const long long col = static_cast<long long>(pack) * VEC;
  float acc[VEC];
#pragma unroll
  for (int v = 0; v < VEC; ++v)
    acc[v] = 0.0f;
  int piece = 0;  // chunk position where the current piece started
  for (int j0 = 0; j0 < len; j0 += kAhead) {
    float rows[kAhead][VEC];
#pragma unroll
    for (int u = 0; u < kAhead; ++u) {
      const int j = j0 + u;
      if (j < len && skey[j + 1] < V) {
        load_pack<T, VEC>(dout + static_cast<long long>(stok[j]) * cols + col, rows[u]);
      } else {
#pragma unroll
        for (int v = 0; v < VEC; ++v)
          rows[u][v] = 0.0f;
      }
    }
#pragma unroll
    for (int u = 0; u < kAhead; ++u) {
      const int j = j0 + u;
      if (j >= len) break;
#pragma unroll
      for (int v = 0; v < VEC; ++v)
        acc[v] += rows[u][v];
      const unsigned key = skey[j + 1];
      if (j < len - 1 && skey[j + 2] == key) continue;  // the piece goes on
      if (key < V) {
        const bool before = piece == 0 && skey[0] == key;
        const bool after = j == len - 1 && skey[len + 1] == key;
        if (!before && !after) {
          G* dst = dtable + static_cast<long long>(key) * cols + col;
          float cur[VEC];
          load_pack<G, VEC>(dst, cur);
#pragma unroll
          for (int v = 0; v < VEC; ++v)
            cur[v] += acc[v];
          store_pack<G, VEC>(dst, cur);
        } else {
          const long long slot = 2LL * chunk + (piece == 0 ? 0 : 1);
          store_pack<float, VEC>(slots + slot * cols + col, acc);
        }
      }
#pragma unroll
      for (int v = 0; v < VEC; ++v)
        acc[v] = 0.0f;
      piece = j + 1;
    }
  }
}

// Adds up the runs that cross chunk edges: the block of the chunk where such a run starts sums the
// run's slots in order and adds the total to its dtable row.
template <typename G, int VEC>
__global__ void __launch_bounds__(kThreads)
    sum_spans(const unsigned* __restrict__ keys, const float* __restrict__ slots,
              G* __restrict__ dtable, int n, unsigned V, int cols) {
  const int chunk = blockIdx.x;
  const int cs = chunk * kChunk, ce = min(n, cs + kChunk);
  if (ce >= n) return;
  const unsigned key = keys[ce - 1];
  if (key >= V || keys[ce] != key) return;             // the chunk's last run ends inside it
  const bool whole = keys[cs] == key;                  // the run covers the whole chunk
  if (whole && cs > 0 && keys[cs - 1] == key) return;  // it started in an earlier chunk
  const int pack = blockIdx.y * blockDim.x + threadIdx.x;
  if (pack >= cols / VEC) return;
  const long long col = static_cast<long long>(pack) * VEC;
  int lo = ce, hi = n;  // first sorted position past the run
  while (lo < hi) {
    const int mid = lo + (hi - lo) / 2;
    if (keys[mid] == key)
      lo = mid + 1;
    else
      hi = mid;
  }
  const int last = (lo - 1) / kChunk;
  float acc[VEC], part[VEC];
#pragma unroll
  for (int v = 0; v < VEC; ++v)
    acc[v] = 0.0f;
  load_pack<float, VEC>(slots + (2LL * chunk + (whole ? 0 : 1)) * cols + col, part);
#pragma unroll
  for (int v = 0; v < VEC; ++v)
    acc[v] += part[v];
#pragma unroll 4
  for (int c = chunk + 1; c <= last; ++c) {
    load_pack<float, VEC>(slots + 2LL * c * cols + col, part);
#pragma unroll
    for (int v = 0; v < VEC; ++v)
      acc[v] += part[v];
  }
  G* dst = dtable + static_cast<long long>(key) * cols + col;
  float cur[VEC];
  load_pack<G, VEC>(dst, cur);
#pragma unroll
  for (int v = 0; v < VEC; ++v)
    cur[v] += acc[v];
  store_pack<G, VEC>(dst, cur);
}

template <typename T, typename G, int VEC>
void launch_sums(const unsigned* keys, const unsigned* toks, const Tensor& dout, Tensor& dtable,
                 float* slots, int n, unsigned V, int cols, Stream stream) {
  const int packs = cols / VEC;
  const int threads = std::min(kThreads, round_up(packs, 32));
  const dim3 grid(static_cast<unsigned>((n + kChunk - 1) / kChunk),
                  static_cast<unsigned>((packs + threads - 1) / threads));
  G* table = static_cast<G*>(dtable.data());
  sum_chunks<T, G, VEC><<<grid, threads, 0, to_cuda(stream)>>>(
      keys, toks, static_cast<const T*>(dout.data()), table, slots, n, V, cols);
  ZT_CUDA_CHECK_LAUNCH();
  sum_spans<G, VEC><<<grid, threads, 0, to_cuda(stream)>>>(keys, slots, table, n, V, cols);
  ZT_CUDA_CHECK_LAUNCH();
}

}  // namespace

void embedding_backward(const Tensor& ids, const Tensor& dout, Tensor& dtable, Stream stream) {
  constexpr const char* op = "embedding_backward";
  const long long n64 = ids.size(0), V64 = dtable.size(0), cols64 = dtable.size(1);
  if (n64 == 0 || cols64 == 0 || V64 == 0) return;
  if (n64 > INT_MAX || V64 >= INT_MAX || cols64 > INT_MAX)
    throw ValueError(op, str("sizes out of range for the CUDA kernel: ids ", ids.describe(),
                             ", dtable ", dtable.describe()));
  const int n = static_cast<int>(n64), cols = static_cast<int>(cols64);
  const unsigned V = static_cast<unsigned>(V64);
  const Device device = ids.device();
  CudaDeviceGuard guard(device);
  cudaStream_t s = to_cuda(stream);

  Tensor pairs = Tensor::empty({4, n64}, DType::i32, device, stream);  // keys, toks, sorted of each
  auto* keys_in = static_cast<unsigned*>(pairs.data());
  unsigned* toks_in = keys_in + n;
  unsigned* keys = keys_in + 2LL * n;
  unsigned* toks = keys_in + 3LL * n;
  if (ids.dtype() == DType::i32)
    make_keys<<<dev::blocks_for(n, 256), 256, 0, s>>>(static_cast<const int*>(ids.data()), n, V64,
                                                      keys_in, toks_in);
  else
    make_keys<<<dev::blocks_for(n, 256), 256, 0, s>>>(static_cast<const long long*>(ids.data()), n,
                                                      V64, keys_in, toks_in);
  ZT_CUDA_CHECK_LAUNCH();

  int end_bit = 1;  // keys lie in [0, V]
  while (end_bit < 32 && (1ULL << end_bit) <= V)
    ++end_bit;
  size_t temp_bytes = 0;
  ZT_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, keys_in, keys, toks_in, toks,
                                                n, 0, end_bit, s));
  Tensor temp = Tensor::empty({static_cast<int64_t>(std::max<size_t>(temp_bytes, 1))}, DType::u8,
                              device, stream);
  ZT_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp.data(), temp_bytes, keys_in, keys, toks_in,
                                                toks, n, 0, end_bit, s));

  const long long chunks = (n64 + kChunk - 1) / kChunk;
  Tensor slots = Tensor::empty({2 * chunks, cols64}, DType::f32, device, stream);
  float* slot_p = slots.data_as<float>();
  ZT_DISPATCH_FLOAT(dout.dtype(), op, T, {
    auto run = [&](auto gtag) {
      using G = decltype(gtag);
      constexpr int kVec = dev::kPackBytes / sizeof(T);
      if (cols % kVec == 0 && is_aligned(dout.data(), dev::kPackBytes) &&
          is_aligned(dtable.data(), kVec * sizeof(G)))
        launch_sums<T, G, kVec>(keys, toks, dout, dtable, slot_p, n, V, cols, stream);
      else
        launch_sums<T, G, 1>(keys, toks, dout, dtable, slot_p, n, V, cols, stream);
    };
    if (dtable.dtype() == DType::f32)
      run(float{});
    else
      run(T{});
  });
}

}  // namespace zt::kernels::cuda
