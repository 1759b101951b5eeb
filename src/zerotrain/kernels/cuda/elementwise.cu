// CUDA elementwise kernels. One grid-stride kernel template (map_kernel) applies an ops:: functor
// (kernels/elementwise_ops.h) to every element; each op is a one-line launch of it.
//
// Memory-bound layout: a thread moves 16-byte packs (8 f16/bf16 or 4 f32), kUnroll packs per
// input loaded before the first is used, so several loads are in flight per thread; consecutive
// threads take consecutive packs (coalesced). The n % pack elements left over go to the first
// threads of block 0. A view at an offset that is not 16-byte aligned takes the element-by-element
// path of packed_io.cuh. Each thread reads all its inputs at an index before writing its outputs
// there, so outputs may alias inputs. Tested by tests/kernels/test_elementwise_cuda.cpp (against
// the CPU backend) and measured by bench/kernel_bench.cpp.
#include <array>

#include "zerotrain/core/cuda/cuda_check.h"
#include "zerotrain/core/cuda/dispatch.cuh"
#include "zerotrain/kernels/cuda/elementwise.h"
#include "zerotrain/kernels/cuda/packed_io.cuh"
#include "zerotrain/kernels/elementwise_ops.h"

namespace zt::kernels::cuda {

namespace {

constexpr int kThreads = 256;
constexpr int kUnroll = 4;        // packs per thread and input in flight before the first use
constexpr int kBlocksPerSm = 16;  // grid cap; beyond it blocks stride over the tensor

template <typename T, int NIn, int NOut>
struct MapArgs {
  const T* in[NIn];  // [n] each
  T* out[NOut];      // [n] each; may equal an input
};

template <typename T, bool Aligned, typename Op>
__global__ void __launch_bounds__(kThreads)
    map_kernel(MapArgs<T, Op::kIn, Op::kOut> args, long long n, Op op) {
  constexpr int kIn = Op::kIn, kOut = Op::kOut, V = Pack<T>::kSize;
  const long long npacks = n / V;
  const long long tile = static_cast<long long>(kThreads) * kUnroll;
  for (long long base = blockIdx.x * tile; base < npacks; base += gridDim.x * tile) {
    Pack<T> in[kUnroll][kIn];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const long long i = base + u * kThreads + threadIdx.x;
      if (i < npacks) {
#pragma unroll
        for (int k = 0; k < kIn; ++k)
          in[u][k] = load_pack<Aligned>(args.in[k], i);
      }
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const long long i = base + u * kThreads + threadIdx.x;
      if (i < npacks) {
        Pack<T> out[kOut];
#pragma unroll
        for (int e = 0; e < V; ++e) {
          float x[kIn], y[kOut];
#pragma unroll
          for (int k = 0; k < kIn; ++k)
            x[k] = dev::to_f(in[u][k].v[e]);
          op(x, y);
#pragma unroll
          for (int k = 0; k < kOut; ++k)
            out[k].v[e] = dev::from_f<T>(y[k]);
        }
#pragma unroll
        for (int k = 0; k < kOut; ++k)
          store_pack<Aligned>(args.out[k], i, out[k]);
      }
    }
  }
  const long long i = npacks * V + threadIdx.x;  // the tail: fewer than V elements
  if (blockIdx.x == 0 && i < n) {
    float x[kIn], y[kOut];
#pragma unroll
    for (int k = 0; k < kIn; ++k)
      x[k] = dev::to_f(args.in[k][i]);
    op(x, y);
#pragma unroll
    for (int k = 0; k < kOut; ++k)
      args.out[k][i] = dev::from_f<T>(y[k]);
  }
}

template <typename T, typename Op>
void launch_typed(const std::array<const Tensor*, Op::kIn>& in,
                  const std::array<Tensor*, Op::kOut>& out, Op op, Stream stream) {
  const long long n = in[0]->numel();
  MapArgs<T, Op::kIn, Op::kOut> args{};
  bool aligned = true;
  for (int k = 0; k < Op::kIn; ++k) {
    args.in[k] = static_cast<const T*>(in[k]->data());
    aligned = aligned && is_aligned16(args.in[k]);
  }
  for (int k = 0; k < Op::kOut; ++k) {
    args.out[k] = static_cast<T*>(out[k]->data());
    aligned = aligned && is_aligned16(args.out[k]);
  }
  int sms = 0;
  ZT_CUDA_CHECK(
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, in[0]->device().index));
  const long long per_block = static_cast<long long>(kThreads) * kUnroll * Pack<T>::kSize;
  const unsigned blocks = dev::blocks_for(n, per_block, static_cast<long long>(sms) * kBlocksPerSm);
  if (aligned)
    map_kernel<T, true, Op><<<blocks, kThreads, 0, to_cuda(stream)>>>(args, n, op);
  else
    map_kernel<T, false, Op><<<blocks, kThreads, 0, to_cuda(stream)>>>(args, n, op);
  ZT_CUDA_CHECK_LAUNCH();
}

// in[0] decides the dtype and device; the front-end has checked that every tensor shares them.
template <typename Op>
void launch_map(const char* name, const std::array<const Tensor*, Op::kIn>& in,
                const std::array<Tensor*, Op::kOut>& out, Op op, Stream stream) {
  if (in[0]->numel() == 0) return;
  CudaDeviceGuard guard(in[0]->device());
  ZT_DISPATCH_FLOAT(in[0]->dtype(), name, T, launch_typed<T, Op>(in, out, op, stream));
}

}  // namespace

void add(const Tensor& a, const Tensor& b, Tensor& out, float alpha, Stream stream) {
  launch_map<ops::Add>("add", {&a, &b}, {&out}, ops::Add{alpha}, stream);
}

void mul(const Tensor& a, const Tensor& b, Tensor& out, Stream stream) {
  launch_map<ops::Mul>("mul", {&a, &b}, {&out}, {}, stream);
}

void scale(const Tensor& x, float alpha, Tensor& out, Stream stream) {
  launch_map<ops::Scale>("scale", {&x}, {&out}, ops::Scale{alpha}, stream);
}

void gelu_tanh_forward(const Tensor& x, Tensor& y, Stream stream) {
  launch_map<ops::GeluTanhForward>("gelu_tanh_forward", {&x}, {&y}, {}, stream);
}

void gelu_tanh_backward(const Tensor& x, const Tensor& dy, Tensor& dx, Stream stream) {
  launch_map<ops::GeluTanhBackward>("gelu_tanh_backward", {&x, &dy}, {&dx}, {}, stream);
}

void silu_forward(const Tensor& x, Tensor& y, Stream stream) {
  launch_map<ops::SiluForward>("silu_forward", {&x}, {&y}, {}, stream);
}

void silu_backward(const Tensor& x, const Tensor& dy, Tensor& dx, Stream stream) {
  launch_map<ops::SiluBackward>("silu_backward", {&x, &dy}, {&dx}, {}, stream);
}

void swiglu_forward(const Tensor& gate, const Tensor& up, Tensor& out, Stream stream) {
  launch_map<ops::SwigluForward>("swiglu_forward", {&gate, &up}, {&out}, {}, stream);
}

void swiglu_backward(const Tensor& gate, const Tensor& up, const Tensor& dout, Tensor& dgate,
                     Tensor& dup, Stream stream) {
  launch_map<ops::SwigluBackward>("swiglu_backward", {&gate, &up, &dout}, {&dgate, &dup}, {},
                                  stream);
}

}  // namespace zt::kernels::cuda
