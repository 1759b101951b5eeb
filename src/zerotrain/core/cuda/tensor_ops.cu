// Device-side helpers behind Tensor: fill and strided copy (any dtype, up to 8 dimensions).
#include <cmath>
#include <cstdint>

#include "zerotrain/core/cuda/cuda_check.h"
#include "zerotrain/core/cuda/dispatch.cuh"
#include "zerotrain/core/tensor.h"

namespace zt::cuda_core {

namespace {

template <typename T>
__global__ void fill_kernel(T* p, long long n, T v) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x)
    p[i] = v;
}

template <typename T>
void launch_fill(void* p, long long n, T v, Stream s) {
  fill_kernel<T><<<zt::dev::blocks_for(n, 256), 256, 0, to_cuda(s)>>>(static_cast<T*>(p), n, v);
  ZT_CUDA_CHECK_LAUNCH();
}

constexpr int kMaxDims = 8;
struct StridedLayout {
  int nd;
  long long shape[kMaxDims];
  long long stride[kMaxDims];
};

template <int Bytes>
struct Word {
  unsigned char b[Bytes];
};

template <int Bytes>
__global__ void strided_copy_kernel(Word<Bytes>* dst, const Word<Bytes>* src, long long n,
                                    StridedLayout L) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x) {
    long long rem = i, off = 0;
    for (int k = L.nd - 1; k >= 0; --k) {
      off += (rem % L.shape[k]) * L.stride[k];
      rem /= L.shape[k];
    }
    dst[i] = src[off];
  }
}

template <int Bytes>
void launch_copy(void* dst, const void* src, long long n, const StridedLayout& L, Stream s) {
  strided_copy_kernel<Bytes><<<zt::dev::blocks_for(n, 256), 256, 0, to_cuda(s)>>>(
      static_cast<Word<Bytes>*>(dst), static_cast<const Word<Bytes>*>(src), n, L);
  ZT_CUDA_CHECK_LAUNCH();
}

}  // namespace

void fill(const Tensor& t, double value, Stream s) {
  const long long n = t.numel();
  if (n == 0) return;
  CudaDeviceGuard g(t.device());
  if (value == 0.0 && !std::signbit(value)) {
    // +0 is all-zero bits in every dtype: the copy engine's memset writes at the memory's rate,
    // about twice the scalar kernel's (the gradients' zero_grad: 3.3 ms -> ~1.5 ms for 6 GB).
    ZT_CUDA_CHECK(
        cudaMemsetAsync(t.data(), 0, static_cast<size_t>(n) * t.element_size(), to_cuda(s)));
    return;
  }
  switch (t.dtype()) {
    case DType::f32:
      launch_fill<float>(t.data(), n, static_cast<float>(value), s);
      break;
    case DType::f16:
      launch_fill<__half>(t.data(), n, __float2half_rn(static_cast<float>(value)), s);
      break;
    case DType::bf16:
      launch_fill<__nv_bfloat16>(t.data(), n, __float2bfloat16_rn(static_cast<float>(value)), s);
      break;
    case DType::i32:
      launch_fill<int32_t>(t.data(), n, static_cast<int32_t>(value), s);
      break;
    case DType::i64:
      launch_fill<long long>(t.data(), n, static_cast<long long>(value), s);
      break;
    case DType::u8:
      launch_fill<unsigned char>(t.data(), n, static_cast<unsigned char>(value), s);
      break;
  }
}

void strided_copy(const Tensor& dst, const Tensor& src, Stream s) {
  if (src.dim() > kMaxDims)
    throw ShapeError(
        "copy", str("strided copy supports up to ", kMaxDims, " dimensions, got ", src.describe()));
  const long long n = src.numel();
  if (n == 0) return;
  StridedLayout L{};
  L.nd = static_cast<int>(src.dim());
  for (int k = 0; k < L.nd; ++k) {
    L.shape[k] = src.shape()[k];
    L.stride[k] = src.strides()[k];
  }
  CudaDeviceGuard g(dst.device());
  switch (src.element_size()) {
    case 1:
      launch_copy<1>(dst.data(), src.data(), n, L, s);
      break;
    case 2:
      launch_copy<2>(dst.data(), src.data(), n, L, s);
      break;
    case 4:
      launch_copy<4>(dst.data(), src.data(), n, L, s);
      break;
    case 8:
      launch_copy<8>(dst.data(), src.data(), n, L, s);
      break;
  }
}

}  // namespace zt::cuda_core
