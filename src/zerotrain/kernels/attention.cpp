// Front-end of causal grouped-query attention: argument checks, option resolution (default scale,
// window clamping), then the CPU or CUDA backend. Tested by tests/kernels/test_attention*.cpp.
#include "zerotrain/kernels/attention.h"

#include <atomic>
#include <cmath>
#include <string_view>
#include <utility>

#include "zerotrain/kernels/check.h"
#include "zerotrain/kernels/cpu/attention.h"
#include "zerotrain/kernels/dispatch.h"
#if ZT_WITH_CUDA
#include "zerotrain/kernels/cuda/attention.h"
#endif

namespace zt::kernels {

namespace {

// q [B, S, Hq, D] against k or v [B, S, Hkv, D]: same B, S and D, and Hq a multiple of Hkv.
void check_qkv_shapes(std::string_view op, const Tensor& q, std::string_view kv_name,
                      const Tensor& kv) {
  check_dim(op, "q", q, 4);
  check_dim(op, kv_name, kv, 4);
  const bool same = q.size(0) == kv.size(0) && q.size(1) == kv.size(1) && q.size(3) == kv.size(3);
  if (!same)
    throw ShapeError(op, str("q ", q.describe(), " and ", kv_name, " ", kv.describe(),
                             ": batch, sequence length and head dim must match"));
  if (kv.size(2) == 0 || q.size(2) % kv.size(2) != 0)
    throw ShapeError(op, str("q ", q.describe(), " and ", kv_name, " ", kv.describe(),
                             ": query heads must be a multiple of kv heads"));
}

void check_inputs(std::string_view op, const Tensor& q, const Tensor& k, const Tensor& v) {
  check_arg(op, "q", q, q, "q");
  check_arg(op, "k", k, q, "q");
  check_arg(op, "v", v, q, "q");
  check_dtype(op, "q", q, kFloatTypes);
  check_same_dtype(op, "q", q, "k", k);
  check_same_dtype(op, "q", q, "v", v);
  check_qkv_shapes(op, q, "k", k);
  check_same_shape(op, "k", k, "v", v);
}

void check_lse(std::string_view op, const Tensor& lse, const Tensor& q) {
  check_arg(op, "lse", lse, q, "q");
  check_dtype(op, "lse", lse, {DType::f32});
  check_shape(op, "lse", lse, {q.size(0), q.size(2), q.size(1)});
}

// Like `ref` in shape and dtype (an output or a gradient).
void check_like(std::string_view op, std::string_view name, const Tensor& t,
                std::string_view ref_name, const Tensor& ref) {
  check_arg(op, name, t, ref, ref_name);
  check_same_dtype(op, ref_name, ref, name, t);
  check_same_shape(op, ref_name, ref, name, t);
}

// The CUDA kernels are compiled for a fixed set of head dims.
void check_cuda_head_dim(std::string_view op, const Tensor& q) {
  if (!q.device().is_cuda()) return;
  const int64_t d = q.size(3);
  if (d != 32 && d != 64 && d != 80 && d != 96 && d != 128)
    throw ValueError(op, str("head dim D=", d, " of q ", q.describe(),
                             " is not supported on CUDA (supported: 32, 64, 80, 96, 128)"));
}

// doc_starts: undefined, or i32 [B, S] on q's device (its values are checked where they are read).
void check_doc_starts(std::string_view op, const AttentionOptions& opt, const Tensor& q) {
  if (!opt.doc_starts.defined()) return;
  check_arg(op, "doc_starts", opt.doc_starts, q, "q");
  check_dtype(op, "doc_starts", opt.doc_starts, {DType::i32});
  check_shape(op, "doc_starts", opt.doc_starts, {q.size(0), q.size(1)});
}

// Default scale 1/sqrt(D); a window of 0 or >= S is full causal and becomes 0.
AttentionOptions resolve(std::string_view op, const AttentionOptions& opt, const Tensor& q) {
  if (opt.window < 0) throw ValueError(op, str("window must be >= 0, got ", opt.window));
  check_doc_starts(op, opt, q);
  if (!std::isfinite(opt.scale)) throw ValueError(op, str("scale must be finite, got ", opt.scale));
  AttentionOptions r = opt;
  if (r.scale == 0.0f) r.scale = 1.0f / std::sqrt(static_cast<float>(q.size(3)));
  if (r.window >= q.size(1)) r.window = 0;
  return r;
}

// Bits of the paths that ran: what attention_paths_used() reports.
constexpr unsigned kRanCudnn = 1, kRanNative = 2, kRanCpu = 4;
std::atomic<unsigned> g_paths_ran{0};

void note_path(const Tensor& q, const Tensor& k, const AttentionOptions& o, AttentionPass pass) {
  unsigned bit = kRanCpu;
#if ZT_WITH_CUDA
  if (q.device().is_cuda())
    bit = std::string_view(cuda::attention_backend_name(q, k, o, pass)) == "cudnn" ? kRanCudnn
                                                                                   : kRanNative;
#else
  (void)q, (void)k, (void)o, (void)pass;
#endif
  if (!(g_paths_ran.load(std::memory_order_relaxed) & bit)) g_paths_ran.fetch_or(bit);
}

}  // namespace

std::string attention_paths_used() {
  const unsigned ran = g_paths_ran.load();
  std::string out;
  for (const auto& [bit, name] : {std::pair{kRanCudnn, "cudnn"}, std::pair{kRanNative, "native"},
                                  std::pair{kRanCpu, "cpu"}})
    if (ran & bit) out += (out.empty() ? "" : " and ") + std::string(name);
  return out;
}

std::string attention_backend_name(const Tensor& q, const Tensor& k, const AttentionOptions& opt,
                                   AttentionPass pass) {
  constexpr std::string_view op = "attention_backend_name";
  check_arg(op, "q", q, q, "q");
  check_arg(op, "k", k, q, "q");
  check_dtype(op, "q", q, kFloatTypes);
  check_same_dtype(op, "q", q, "k", k);
  check_qkv_shapes(op, q, "k", k);
  if (!q.device().is_cuda()) return "cpu";
#if ZT_WITH_CUDA
  return cuda::attention_backend_name(q, k, resolve(op, opt, q), pass);
#else
  throw_no_cuda(op);
#endif
}

void attention_forward(const Tensor& q, const Tensor& k, const Tensor& v, Tensor& out, Tensor& lse,
                       const AttentionOptions& opt, Stream stream) {
  constexpr std::string_view op = "attention_forward";
  check_inputs(op, q, k, v);
  check_like(op, "out", out, "q", q);
  check_lse(op, lse, q);
  check_cuda_head_dim(op, q);
  const AttentionOptions o = resolve(op, opt, q);
  if (q.numel() == 0) return;
  if (q.device().is_cuda())
    ZT_ON_CUDA(op, cuda::attention_forward(q, k, v, out, lse, o, stream));
  else
    cpu::attention_forward(q, k, v, out, lse, o);
  note_path(q, k, o, AttentionPass::forward);
}

void attention_backward(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& out,
                        const Tensor& lse, const Tensor& dout, Tensor& dq, Tensor& dk, Tensor& dv,
                        const AttentionOptions& opt, Stream stream) {
  constexpr std::string_view op = "attention_backward";
  check_inputs(op, q, k, v);
  check_like(op, "out", out, "q", q);
  check_lse(op, lse, q);
  check_like(op, "dout", dout, "q", q);
  check_like(op, "dq", dq, "q", q);
  check_like(op, "dk", dk, "k", k);
  check_like(op, "dv", dv, "v", v);
  check_cuda_head_dim(op, q);
  const AttentionOptions o = resolve(op, opt, q);
  if (q.numel() == 0) {  // no query reads k or v
    dk.fill(0.0, stream);
    dv.fill(0.0, stream);
    return;
  }
  if (q.device().is_cuda())
    ZT_ON_CUDA(op, cuda::attention_backward(q, k, v, out, lse, dout, dq, dk, dv, o, stream));
  else
    cpu::attention_backward(q, k, v, out, lse, dout, dq, dk, dv, o);
  note_path(q, k, o, AttentionPass::backward);
}

}  // namespace zt::kernels
