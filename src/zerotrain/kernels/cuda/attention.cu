// CUDA attention entry points: launch-limit and alignment checks, the kernel argument blocks, the
// backward's preprocessing (D = rowsum(dO * O) into an f32 scratch on the caller's stream), and the
// choice between the tensor-core kernels (f16/bf16) and the CUDA-core path (f32), behind the choice
// between cuDNN and our kernels (attention_select.h).
// Tested by tests/kernels/test_attention_cuda.cpp and tests/kernels/test_attention_cudnn.cpp.
#include <climits>
#include <cstdint>

#include "zerotrain/core/cuda/cuda_check.h"
#include "zerotrain/core/cuda/dispatch.cuh"
#include "zerotrain/kernels/cuda/attention.h"
#include "zerotrain/kernels/cuda/attention_launch.h"
#include "zerotrain/kernels/cuda/attention_select.h"
#include "zerotrain/kernels/cuda/cudnn_attention.h"

namespace zt::kernels::cuda {

namespace {

// cp.async and the vector loads move 16-byte chunks.
void check_aligned(std::string_view op, std::string_view name, const Tensor& t) {
  if (reinterpret_cast<uintptr_t>(t.data()) % 16 != 0)
    throw ValueError(op, str(name, " ", t.describe(), " must start on a 16-byte boundary on CUDA"));
}

// Grid y/z carry heads and batch; positions are ints inside the kernels.
void check_limits(std::string_view op, const Tensor& q) {
  if (q.size(0) > 65535 || q.size(2) > 65535 || q.size(1) > INT_MAX / 2)
    throw ValueError(op, str("q ", q.describe(), ": batch and heads must be <= 65535 and S <= ",
                             INT_MAX / 2, " on CUDA"));
}

// One warp per (b, i, h) row, rows in memory order; writes dd[(b * Hq + h) * S + i].
template <typename T>
__global__ void row_dots_kernel(const T* out, const T* dout, float* dd, int S, int Hq, int D,
                                long long rows) {
  const long long row = blockIdx.x * 8LL + (threadIdx.x >> 5);
  const int lane = threadIdx.x & 31;
  if (row >= rows) return;
  const T* o = out + row * D;
  const T* g = dout + row * D;
  float s = 0.f;
  for (int d = lane; d < D; d += 32)
    s += zt::dev::to_f(o[d]) * zt::dev::to_f(g[d]);
#pragma unroll
  for (int off = 16; off > 0; off >>= 1)
    s += __shfl_xor_sync(0xffffffffu, s, off);
  if (lane == 0) {
    const long long h = row % Hq, bi = row / Hq, i = bi % S, b = bi / S;
    dd[(b * Hq + h) * S + i] = s;
  }
}

// The packed rows' document starts, or null.
const int* doc_starts_of(const AttentionOptions& opt) {
  return opt.doc_starts.defined() ? opt.doc_starts.data_as<int32_t>() : nullptr;
}

attn::FwdArgs fwd_args(const Tensor& q, const Tensor& k, const Tensor& v, Tensor& out, Tensor& lse,
                       const AttentionOptions& opt) {
  return {q.data(),
          k.data(),
          v.data(),
          out.data(),
          lse.data_as<float>(),
          static_cast<int>(q.size(0)),
          static_cast<int>(q.size(1)),
          static_cast<int>(q.size(2)),
          static_cast<int>(k.size(2)),
          static_cast<int>(q.size(3)),
          static_cast<int>(opt.window),
          opt.scale,
          doc_starts_of(opt)};
}

}  // namespace

void native_attention_forward(const Tensor& q, const Tensor& k, const Tensor& v, Tensor& out,
                              Tensor& lse, const AttentionOptions& opt, Stream stream) {
  constexpr std::string_view op = "attention_forward";
  check_limits(op, q);
  check_aligned(op, "q", q);
  check_aligned(op, "k", k);
  check_aligned(op, "v", v);
  check_aligned(op, "out", out);
  CudaDeviceGuard guard(q.device());
  const attn::FwdArgs a = fwd_args(q, k, v, out, lse, opt);
  if (q.dtype() == DType::f32)
    attn::forward_f32(a, stream);
  else
    attn::forward_tensor_core(a, q.dtype(), stream);
}

void native_attention_backward(const Tensor& q, const Tensor& k, const Tensor& v,
                               const Tensor& out, const Tensor& lse, const Tensor& dout,
                               Tensor& dq, Tensor& dk, Tensor& dv, const AttentionOptions& opt,
                               Stream stream) {
  constexpr std::string_view op = "attention_backward";
  check_limits(op, q);
  const std::pair<const char*, const Tensor*> all[] = {{"q", &q},     {"k", &k},       {"v", &v},
                                                       {"out", &out}, {"dout", &dout}, {"dq", &dq},
                                                       {"dk", &dk},   {"dv", &dv}};
  for (const auto& [name, t] : all)
    check_aligned(op, name, *t);
  CudaDeviceGuard guard(q.device());
  const int B = static_cast<int>(q.size(0)), S = static_cast<int>(q.size(1));
  const int Hq = static_cast<int>(q.size(2)), D = static_cast<int>(q.size(3));

  // D_i = dO_i . O_i, f32 [B, Hq, S]; freed back to the caching allocator on this stream.
  Tensor dd = Tensor::empty({B, Hq, S}, DType::f32, q.device(), stream);
  const long long rows = static_cast<long long>(B) * S * Hq;
  ZT_DISPATCH_FLOAT(q.dtype(), op, scalar_t, {
    row_dots_kernel<scalar_t>
        <<<zt::dev::blocks_for(rows, 8, (1LL << 31) - 1), 256, 0, to_cuda(stream)>>>(
            static_cast<const scalar_t*>(out.data()), static_cast<const scalar_t*>(dout.data()),
            dd.data_as<float>(), S, Hq, D, rows);
  });
  ZT_CUDA_CHECK_LAUNCH();

  const attn::BwdArgs a{q.data(),
                        k.data(),
                        v.data(),
                        out.data(),
                        dout.data(),
                        lse.data_as<float>(),
                        dd.data_as<float>(),
                        dq.data(),
                        dk.data(),
                        dv.data(),
                        B,
                        S,
                        Hq,
                        static_cast<int>(k.size(2)),
                        D,
                        static_cast<int>(opt.window),
                        opt.scale,
                        doc_starts_of(opt)};
  if (q.dtype() == DType::f32) {
    attn::backward_f32(a, stream);
  } else {
    attn::backward_dkdv_tensor_core(a, q.dtype(), stream);
    attn::backward_dq_tensor_core(a, q.dtype(), stream);
  }
}

const char* attention_backend_name(const Tensor& q, const Tensor& k, const AttentionOptions& opt,
                                   AttentionPass pass) {
  return attention_path_name(choose_attention_path(attention_mode(), q, k, opt, pass));
}

void attention_forward(const Tensor& q, const Tensor& k, const Tensor& v, Tensor& out, Tensor& lse,
                       const AttentionOptions& opt, Stream stream) {
  if (choose_attention_path(attention_mode(), q, k, opt, AttentionPass::forward) ==
      AttentionPath::cudnn)
    cudnn_attention_forward(q, k, v, out, lse, opt, stream);
  else
    native_attention_forward(q, k, v, out, lse, opt, stream);
}

void attention_backward(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& out,
                        const Tensor& lse, const Tensor& dout, Tensor& dq, Tensor& dk, Tensor& dv,
                        const AttentionOptions& opt, Stream stream) {
  if (choose_attention_path(attention_mode(), q, k, opt, AttentionPass::backward) ==
      AttentionPath::cudnn)
    cudnn_attention_backward(q, k, v, out, lse, dout, dq, dk, dv, opt, stream);
  else
    native_attention_backward(q, k, v, out, lse, dout, dq, dk, dv, opt, stream);
}

}  // namespace zt::kernels::cuda
