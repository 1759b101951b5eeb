// CUDA reductions: sum, max, column sums and the global L2 norm, accumulated in f32.
//
// [Note: deterministic CUDA reductions]
// No floating-point atomics. Every reduction runs in two launches: a first pass where each block
// writes one partial (or one row of partials) to scratch, and a final pass that combines the
// partials in a fixed tree. The grid of the first pass depends only on the sizes (never on the
// device, the stream or timing), a thread visits its elements in a fixed order, and block_reduce
// combines lanes and warps in a fixed shuffle tree (sum_rows: a fixed order over row lanes, then
// over splits). Unaligned views load the same elements one by one in the same order (load_pack,
// load_columns), so an input gives bitwise the same result run after run, wherever it sits in
// memory.
//
// global_l2_norm handles any number of tensors without a launch per tensor: tensors are cut into
// kL2Chunk-element chunks, a batch of up to kL2BatchTensors tensor descriptors travels as one
// kernel parameter (no host-to-device copy, no sync), one block reduces one chunk, and one final
// launch combines every chunk's partial. Tested by tests/kernels/test_reduce_cuda.cpp.
#include <algorithm>
#include <climits>

#include "zerotrain/core/cuda/cuda_check.h"
#include "zerotrain/core/cuda/dispatch.cuh"
#include "zerotrain/kernels/cuda/packed_io.cuh"
#include "zerotrain/kernels/cuda/reduce.h"

namespace zt::kernels::cuda {

namespace {

constexpr int kThreads = 256;             // first-pass blocks
constexpr int kUnroll = 4;                // packs per thread in flight
constexpr int kFinishThreads = 1024;      // the single block of the final pass
constexpr long long kMaxPartials = 1024;  // sum/max: first-pass blocks at most
constexpr int kColThreads = 32;           // sum_rows: threads across a column tile (one warp)
constexpr int kRowLanes = 8;              // sum_rows: warps per block, each taking every 8th row
constexpr int kRowUnroll = 8;             // sum_rows: rows per thread in flight
constexpr long long kRowsPerSplit = 128;  // sum_rows: rows per first-pass block, before the cap
constexpr long long kMaxSplits = 64;      // sum_rows: row splits at most
constexpr long long kL2Chunk = 16384;     // global_l2_norm: elements per first-pass block
constexpr int kL2BatchTensors = 120;      // global_l2_norm: tensors per launch

struct SumOp {
  __device__ static float identity() { return 0.0f; }
  __device__ float map(float v) const { return v; }
  __device__ float combine(float a, float b) const { return a + b; }
  __device__ float finish(float v) const { return v; }
};

struct MaxOp {  // NaN wins over every number
  __device__ static float identity() { return -__int_as_float(0x7f800000); }
  __device__ float map(float v) const { return v; }
  __device__ float combine(float a, float b) const { return (a > b || a != a) ? a : b; }
  __device__ float finish(float v) const { return v; }
};

struct SumSquaresOp {  // partials are sums of squares; the result is the root of their sum
  __device__ static float identity() { return 0.0f; }
  __device__ float map(float v) const { return v * v; }
  __device__ float combine(float a, float b) const { return a + b; }
  __device__ float finish(float v) const { return sqrtf(v); }
};

// Combines one value per thread; the result is valid in thread 0. blockDim.x is a multiple of 32.
template <typename R>
__device__ float block_reduce(float v, R r) {
  __shared__ float warp_partial[32];
#pragma unroll
  for (int o = 16; o > 0; o >>= 1)
    v = r.combine(v, __shfl_down_sync(0xffffffffu, v, o));
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (lane == 0) warp_partial[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < static_cast<int>(blockDim.x / 32) ? warp_partial[lane] : R::identity();
#pragma unroll
    for (int o = 16; o > 0; o >>= 1)
      v = r.combine(v, __shfl_down_sync(0xffffffffu, v, o));
  }
  return v;
}

// This thread's share of p[0, n): packs first + u * kThreads + threadIdx.x (u < kUnroll), then the
// same shifted by stride, ...; with `tail`, also element (n / V) * V + threadIdx.x when below n.
template <typename T, bool Aligned, typename R>
__device__ float thread_partial(const T* p, long long n, long long first, long long stride,
                                bool tail, R r) {
  constexpr int V = Pack<T>::kSize;
  const long long npacks = n / V;
  float acc = R::identity();
  for (long long base = first; base < npacks; base += stride) {
    Pack<T> pk[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const long long i = base + u * kThreads + threadIdx.x;
      if (i < npacks) pk[u] = load_pack<Aligned>(p, i);
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const long long i = base + u * kThreads + threadIdx.x;
      if (i < npacks) {
#pragma unroll
        for (int e = 0; e < V; ++e)
          acc = r.combine(acc, r.map(dev::to_f(pk[u].v[e])));
      }
    }
  }
  const long long i = npacks * V + threadIdx.x;
  if (tail && i < n) acc = r.combine(acc, r.map(dev::to_f(p[i])));
  return acc;
}

// sum / max, first pass: block b strides over the tensor and writes partials[b].
template <typename T, bool Aligned, typename R>
__global__ void __launch_bounds__(kThreads)
    partials_kernel(const T* x, long long n, float* partials, R r) {
  const long long tile = static_cast<long long>(kThreads) * kUnroll;
  float acc =
      thread_partial<T, Aligned>(x, n, blockIdx.x * tile, gridDim.x * tile, blockIdx.x == 0, r);
  acc = block_reduce(acc, r);
  if (threadIdx.x == 0) partials[blockIdx.x] = acc;
}

// Final pass of sum, max and global_l2_norm: one block combines `count` partials into out[0].
template <typename R>
__global__ void __launch_bounds__(kFinishThreads)
    finish_kernel(const float* partials, long long count, float* out, R r) {
  float acc = R::identity();
  for (long long i = threadIdx.x; i < count; i += blockDim.x)
    acc = r.combine(acc, partials[i]);
  acc = block_reduce(acc, r);
  if (threadIdx.x == 0) out[0] = r.finish(acc);
}

template <typename T, typename R>
void reduce_all_typed(const Tensor& x, Tensor& out, R r, Stream stream) {
  const long long n = x.numel();
  const long long per_block = static_cast<long long>(kThreads) * kUnroll * Pack<T>::kSize;
  const unsigned blocks = dev::blocks_for(n, per_block, kMaxPartials);
  Tensor partials = Tensor::empty({blocks}, DType::f32, x.device(), stream);  // [blocks] f32
  const T* p = static_cast<const T*>(x.data());
  float* part = static_cast<float*>(partials.data());
  if (is_aligned16(p))
    partials_kernel<T, true><<<blocks, kThreads, 0, to_cuda(stream)>>>(p, n, part, r);
  else
    partials_kernel<T, false><<<blocks, kThreads, 0, to_cuda(stream)>>>(p, n, part, r);
  ZT_CUDA_CHECK_LAUNCH();
  finish_kernel<<<1, kFinishThreads, 0, to_cuda(stream)>>>(part, blocks,
                                                           static_cast<float*>(out.data()), r);
  ZT_CUDA_CHECK_LAUNCH();
}

// The V columns [c0, c0 + V) of one row as a pack: one 16-byte load when Aligned (row starts and
// c0 are 16-byte aligned and the pack lies inside the row), else element by element with zeros
// past column N - 1.
template <bool Aligned, typename T>
__device__ __forceinline__ Pack<T> load_columns(const T* row, long long c0, long long N) {
  Pack<T> r;
  if constexpr (Aligned) {
    r = *reinterpret_cast<const Pack<T>*>(row + c0);
  } else {
#pragma unroll
    for (int e = 0; e < Pack<T>::kSize; ++e)
      r.v[e] = c0 + e < N ? row[c0 + e] : dev::from_f<T>(0.0f);
  }
  return r;
}

// sum_rows, first pass: block (bx, by) sums rows [by * rows_per_split, ...) of the column tile
// [bx * kTile, (bx + 1) * kTile) into partial[by, column] ([splits, N] f32). Thread (tx, ty)
// owns the V columns bx * kTile + tx * V + [0, V) and the rows r0 + ty, r0 + ty + kRowLanes, ...;
// kRowUnroll rows are in flight per thread. A warp reads 512 contiguous bytes of a row.
template <typename T, bool Aligned>
__global__ void __launch_bounds__(kColThreads* kRowLanes)
    col_partials_kernel(const T* x, long long M, long long N, long long rows_per_split,
                        float* partial) {
  constexpr int V = Pack<T>::kSize, kTile = kColThreads * V;
  __shared__ float lanes[kRowLanes][kTile];
  const long long tile0 = static_cast<long long>(blockIdx.x) * kTile;
  const long long c0 = tile0 + threadIdx.x * V;
  const long long r0 = static_cast<long long>(blockIdx.y) * rows_per_split;
  const long long r1 = min(M, r0 + rows_per_split);
  float acc[V] = {};
  if (c0 < N) {
    for (long long r = r0 + threadIdx.y; r < r1; r += kRowLanes * kRowUnroll) {
      Pack<T> pk[kRowUnroll];
#pragma unroll
      for (int u = 0; u < kRowUnroll; ++u) {
        const long long row = r + u * kRowLanes;
        if (row < r1) pk[u] = load_columns<Aligned>(x + row * N, c0, N);
      }
#pragma unroll
      for (int u = 0; u < kRowUnroll; ++u) {
        if (r + u * kRowLanes < r1) {
#pragma unroll
          for (int e = 0; e < V; ++e)
            acc[e] += dev::to_f(pk[u].v[e]);
        }
      }
    }
  }
#pragma unroll
  for (int e = 0; e < V; ++e)
    lanes[threadIdx.y][threadIdx.x * V + e] = acc[e];
  __syncthreads();
  for (int j = threadIdx.y * kColThreads + threadIdx.x; j < kTile; j += kColThreads * kRowLanes) {
    if (tile0 + j < N) {
      float s = lanes[0][j];
#pragma unroll
      for (int k = 1; k < kRowLanes; ++k)
        s += lanes[k][j];
      partial[blockIdx.y * N + tile0 + j] = s;
    }
  }
}

// sum_rows, final pass: out[c] (+)= sum over splits of partial[split, c], in split order.
template <typename O>
__global__ void col_finish_kernel(const float* partial, long long splits, long long N, O* out,
                                  bool accumulate) {
  for (long long c = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; c < N;
       c += static_cast<long long>(gridDim.x) * blockDim.x) {
    float s = 0.0f;
    for (long long k = 0; k < splits; ++k)
      s += partial[k * N + c];
    if (accumulate) s = dev::to_f(out[c]) + s;
    out[c] = dev::from_f<O>(s);
  }
}

template <typename T>
void sum_rows_typed(const Tensor& x, Tensor& out, bool accumulate, Stream stream) {
  const long long M = x.size(0), N = x.size(1);
  const long long splits = std::clamp((M + kRowsPerSplit - 1) / kRowsPerSplit, 1LL, kMaxSplits);
  const long long rows_per_split = (M + splits - 1) / splits;
  Tensor partial = Tensor::empty({splits, N}, DType::f32, x.device(), stream);  // [splits, N] f32
  float* part = static_cast<float*>(partial.data());
  constexpr long long kTile = kColThreads * Pack<T>::kSize;
  const dim3 grid(static_cast<unsigned>((N + kTile - 1) / kTile), static_cast<unsigned>(splits));
  const dim3 block(kColThreads, kRowLanes);
  const T* p = static_cast<const T*>(x.data());
  if (is_aligned16(p) && N % Pack<T>::kSize == 0)
    col_partials_kernel<T, true>
        <<<grid, block, 0, to_cuda(stream)>>>(p, M, N, rows_per_split, part);
  else
    col_partials_kernel<T, false>
        <<<grid, block, 0, to_cuda(stream)>>>(p, M, N, rows_per_split, part);
  ZT_CUDA_CHECK_LAUNCH();
  const unsigned blocks = dev::blocks_for(N, kThreads);
  if (out.dtype() == DType::f32)
    col_finish_kernel<<<blocks, kThreads, 0, to_cuda(stream)>>>(
        part, splits, N, static_cast<float*>(out.data()), accumulate);
  else
    col_finish_kernel<<<blocks, kThreads, 0, to_cuda(stream)>>>(
        part, splits, N, static_cast<T*>(out.data()), accumulate);
  ZT_CUDA_CHECK_LAUNCH();
}

// Up to kL2BatchTensors non-empty tensors, passed by value as a kernel parameter.
struct L2Batch {
  const void* data[kL2BatchTensors];
  long long numel[kL2BatchTensors];
  long long chunk_end[kL2BatchTensors];  // chunks of tensors [0, k] of the batch
  DType dtype[kL2BatchTensors];
  bool aligned[kL2BatchTensors];  // data is 16-byte aligned
  int count;
  long long first_partial;  // index of the batch's first chunk among all partials
};
static_assert(sizeof(L2Batch) <= 4000, "L2Batch must fit the 4 KB kernel parameter space");

template <typename T>
__device__ float l2_chunk(const void* data, long long begin, long long len, bool aligned) {
  const T* p = static_cast<const T*>(data) + begin;
  const long long tile = static_cast<long long>(kThreads) * kUnroll;
  return aligned ? thread_partial<T, true>(p, len, 0, tile, true, SumSquaresOp{})
                 : thread_partial<T, false>(p, len, 0, tile, true, SumSquaresOp{});
}

// global_l2_norm, first pass: block b reduces the b-th chunk of the batch.
__global__ void __launch_bounds__(kThreads)
    l2_partials_kernel(const __grid_constant__ L2Batch batch, float* partials) {
  const long long b = blockIdx.x;
  int lo = 0, hi = batch.count - 1;  // the first tensor whose chunks end past b
  while (lo < hi) {
    const int mid = (lo + hi) / 2;
    if (batch.chunk_end[mid] > b)
      hi = mid;
    else
      lo = mid + 1;
  }
  const long long begin = (b - (lo == 0 ? 0 : batch.chunk_end[lo - 1])) * kL2Chunk;
  const long long len = min(kL2Chunk, batch.numel[lo] - begin);
  float acc = 0.0f;
  switch (batch.dtype[lo]) {
    case DType::f32:
      acc = l2_chunk<float>(batch.data[lo], begin, len, batch.aligned[lo]);
      break;
    case DType::f16:
      acc = l2_chunk<__half>(batch.data[lo], begin, len, batch.aligned[lo]);
      break;
    case DType::bf16:
      acc = l2_chunk<__nv_bfloat16>(batch.data[lo], begin, len, batch.aligned[lo]);
      break;
    default:
      break;
  }
  acc = block_reduce(acc, SumSquaresOp{});
  if (threadIdx.x == 0) partials[batch.first_partial + b] = acc;
}

long long l2_chunks(const Tensor& t) {
  return (t.numel() + kL2Chunk - 1) / kL2Chunk;
}

}  // namespace

void sum(const Tensor& x, Tensor& out, Stream stream) {
  CudaDeviceGuard guard(x.device());
  ZT_DISPATCH_FLOAT(x.dtype(), "sum", T, reduce_all_typed<T>(x, out, SumOp{}, stream));
}

void max(const Tensor& x, Tensor& out, Stream stream) {
  CudaDeviceGuard guard(x.device());
  ZT_DISPATCH_FLOAT(x.dtype(), "max", T, reduce_all_typed<T>(x, out, MaxOp{}, stream));
}

void sum_rows(const Tensor& x, Tensor& out, bool accumulate, Stream stream) {
  if (x.size(1) == 0) return;
  CudaDeviceGuard guard(x.device());
  ZT_DISPATCH_FLOAT(x.dtype(), "sum_rows", T, sum_rows_typed<T>(x, out, accumulate, stream));
}

void global_l2_norm(const std::vector<Tensor>& xs, Tensor& out, Stream stream) {
  CudaDeviceGuard guard(out.device());
  std::vector<const Tensor*> tensors;  // the non-empty ones, in order
  long long total_chunks = 0;
  for (const Tensor& t : xs) {
    if (t.numel() == 0) continue;
    tensors.push_back(&t);
    total_chunks += l2_chunks(t);
  }
  Tensor partials = Tensor::empty({std::max(total_chunks, 1LL)}, DType::f32, out.device(),
                                  stream);  // [total_chunks] f32
  float* part = static_cast<float*>(partials.data());
  long long first = 0;
  for (size_t b = 0; b < tensors.size(); b += kL2BatchTensors) {
    L2Batch batch{};
    batch.count = static_cast<int>(std::min<size_t>(kL2BatchTensors, tensors.size() - b));
    batch.first_partial = first;
    long long chunks = 0;
    for (int k = 0; k < batch.count; ++k) {
      const Tensor& t = *tensors[b + k];
      batch.data[k] = t.data();
      batch.numel[k] = t.numel();
      batch.dtype[k] = t.dtype();
      batch.aligned[k] = is_aligned16(t.data());
      chunks += l2_chunks(t);
      batch.chunk_end[k] = chunks;
    }
    ZT_ASSERT(chunks <= INT_MAX, "global_l2_norm", "too many chunks in one launch: ", chunks);
    l2_partials_kernel<<<static_cast<unsigned>(chunks), kThreads, 0, to_cuda(stream)>>>(batch,
                                                                                        part);
    ZT_CUDA_CHECK_LAUNCH();
    first += chunks;
  }
  finish_kernel<<<1, kFinishThreads, 0, to_cuda(stream)>>>(
      part, total_chunks, static_cast<float*>(out.data()), SumSquaresOp{});
  ZT_CUDA_CHECK_LAUNCH();
}

namespace {

// chunk_sum_squares: one block per chunk; thread t adds elements t, t + kThreads, ... of its chunk
// in f64, then a fixed tree combines the threads. An element past n contributes nothing, exactly
// as a stored zero would (x + 0.0 == x), so padding never changes a partial.
template <typename T>
__global__ void __launch_bounds__(kThreads)
    chunk_squares_kernel(const T* x, long long n, long long chunk, float* out) {
  __shared__ double partial[kThreads];
  const long long begin = static_cast<long long>(blockIdx.x) * chunk;
  const long long end = min(n, begin + chunk);
  double acc = 0.0;
  for (long long i = begin + threadIdx.x; i < end; i += kThreads) {
    const double v = static_cast<double>(dev::to_f(x[i]));
    acc += v * v;
  }
  partial[threadIdx.x] = acc;
  __syncthreads();
  for (int s = kThreads / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) partial[threadIdx.x] += partial[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) out[blockIdx.x] = static_cast<float>(partial[0]);
}

}  // namespace

void chunk_sum_squares(const Tensor& x, int64_t chunk, Tensor& out, Stream stream) {
  CudaDeviceGuard guard(x.device());
  const long long chunks = (x.numel() + chunk - 1) / chunk;
  ZT_ASSERT(chunks <= INT_MAX, "chunk_sum_squares", "too many chunks: ", chunks);
  ZT_DISPATCH_FLOAT(x.dtype(), "chunk_sum_squares", scalar_t, {
    chunk_squares_kernel<scalar_t><<<static_cast<unsigned>(chunks), kThreads, 0, to_cuda(stream)>>>(
        static_cast<const scalar_t*>(x.data()), x.numel(), chunk, static_cast<float*>(out.data()));
  });
  ZT_CUDA_CHECK_LAUNCH();
}

}  // namespace zt::kernels::cuda
