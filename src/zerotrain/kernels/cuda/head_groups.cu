// Repeating kv heads and summing head groups (head_groups.h): memory-bound, one thread per 16-byte
// pack of a head's row (or per element where a row is not a whole number of aligned packs),
// grid-stride.
#include "zerotrain/kernels/cuda/head_groups.h"

#include "zerotrain/core/cuda/cuda_check.h"
#include "zerotrain/core/cuda/dispatch.cuh"
#include "zerotrain/kernels/cuda/packed_io.cuh"

namespace zt::kernels::cuda {

namespace {

// Units: packs of kSize elements when a head row holds whole aligned packs, single elements
// otherwise. `rows` = B * S, `units` per head row = D / width.
template <typename T, int Width>
struct alignas(sizeof(T) * Width) Unit {  // one vector access when Width fills 16 bytes
  T v[Width];
};

// Both layouts are rows of head rows: [B * S * H, units]. Since Hq = Hkv * group, query head row
// r (of B * S * Hq) reads kv head row r / group, and kv head row k sums query head rows
// k * group .. k * group + group - 1.
template <typename T, int Width>
__global__ void repeat_kernel(const Unit<T, Width>* src, Unit<T, Width>* dst, long long n,
                              int group, int units) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x)
    dst[i] = src[(i / units / group) * units + i % units];
}

template <typename T, int Width>
__global__ void sum_groups_kernel(const Unit<T, Width>* src, Unit<T, Width>* dst, long long n,
                                  int group, int units) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    float acc[Width];
#pragma unroll
    for (int e = 0; e < Width; ++e)
      acc[e] = 0.0f;
    const long long first = (i / units) * group * units + i % units;
    for (int j = 0; j < group; ++j) {
      const Unit<T, Width> x = src[first + static_cast<long long>(j) * units];
#pragma unroll
      for (int e = 0; e < Width; ++e)
        acc[e] += zt::dev::to_f(x.v[e]);
    }
    Unit<T, Width> out;
#pragma unroll
    for (int e = 0; e < Width; ++e)
      out.v[e] = zt::dev::from_f<T>(acc[e]);
    dst[i] = out;
  }
}

struct Dims {
  long long rows;  // B * S
  int hq, hkv, d;
};

Dims check(const char* op, const Tensor& wide, const Tensor& narrow) {
  if (wide.dim() != 4 || narrow.dim() != 4 || wide.size(0) != narrow.size(0) ||
      wide.size(1) != narrow.size(1) || wide.size(3) != narrow.size(3) || narrow.size(2) == 0 ||
      wide.size(2) % narrow.size(2) != 0)
    throw ShapeError(op, str("heads ", wide.describe(), " and kv heads ", narrow.describe(),
                             " must be [B, S, Hq, D] and [B, S, Hkv, D] with Hkv dividing Hq"));
  if (wide.dtype() != narrow.dtype() || wide.device() != narrow.device() ||
      !wide.device().is_cuda() || !wide.is_contiguous() || !narrow.is_contiguous())
    throw ValueError(op, str(wide.describe(), " and ", narrow.describe(),
                             " must be contiguous, of one dtype, on one CUDA device"));
  return {wide.size(0) * wide.size(1), static_cast<int>(wide.size(2)),
          static_cast<int>(narrow.size(2)), static_cast<int>(wide.size(3))};
}

template <typename T, int Width>
void launch(bool repeat, const void* src, void* dst, const Dims& d, cudaStream_t stream) {
  const int units = d.d / Width, group = d.hq / d.hkv, threads = 256;
  using U = Unit<T, Width>;
  const long long n = d.rows * (repeat ? d.hq : d.hkv) * units;  // units written
  const unsigned blocks = zt::dev::blocks_for(n, threads);
  if (repeat)
    repeat_kernel<T, Width><<<blocks, threads, 0, stream>>>(static_cast<const U*>(src),
                                                            static_cast<U*>(dst), n, group, units);
  else
    sum_groups_kernel<T, Width><<<blocks, threads, 0, stream>>>(
        static_cast<const U*>(src), static_cast<U*>(dst), n, group, units);
  ZT_CUDA_CHECK(cudaGetLastError());
}

void run(bool repeat, const Tensor& src, Tensor& dst, const Dims& d, Stream stream) {
  if (d.rows == 0 || d.d == 0) return;
  CudaDeviceGuard guard(src.device());
  ZT_DISPATCH_FLOAT(src.dtype(), repeat ? "repeat_kv_heads" : "sum_head_groups", T, {
    constexpr int kPack = Pack<T>::kSize;
    if (d.d % kPack == 0 && is_aligned16(src.data()) && is_aligned16(dst.data()))
      launch<T, kPack>(repeat, src.data(), dst.data(), d, to_cuda(stream));
    else
      launch<T, 1>(repeat, src.data(), dst.data(), d, to_cuda(stream));
  });
}

}  // namespace

void repeat_kv_heads(const Tensor& src, Tensor& dst, Stream stream) {
  run(true, src, dst, check("repeat_kv_heads", dst, src), stream);
}

void sum_head_groups(const Tensor& src, Tensor& dst, Stream stream) {
  run(false, src, dst, check("sum_head_groups", src, dst), stream);
}

}  // namespace zt::kernels::cuda
