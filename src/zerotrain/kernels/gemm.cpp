// Front-end of the GEMM family: argument checks, then the OpenBLAS or cuBLASLt backend.
// Tested by tests/kernels/test_gemm.cpp (CPU, errors) and test_gemm_cuda.cpp.
#include "zerotrain/kernels/gemm.h"

#include "zerotrain/kernels/check.h"
#include "zerotrain/kernels/cpu/gemm.h"
#include "zerotrain/kernels/cuda/gemm.h"
#include "zerotrain/kernels/dispatch.h"

namespace zt::kernels {

namespace {

constexpr const char* kOp = "gemm";

// "a f32[3, 4] on cpu, b f32[5, 6] on cpu, c f32[3, 6] on cpu (trans_a=0, trans_b=0)"
std::string describe_operands(const Tensor& a, const Tensor& b, const Tensor& c,
                              const GemmOptions& opt) {
  return str("a ", a.describe(), ", b ", b.describe(), ", c ", c.describe(),
             " (trans_a=", opt.trans_a, ", trans_b=", opt.trans_b, ")");
}

bool bytes_overlap(const Tensor& x, const Tensor& y) {
  const auto* px = static_cast<const char*>(x.data());
  const auto* py = static_cast<const char*>(y.data());
  return px < py + y.nbytes() && py < px + x.nbytes();
}

void check_bias(const Tensor& bias, const Tensor& a, const Tensor& c, int64_t n) {
  check_arg(kOp, "bias", bias, a, "a");
  if (bias.dim() != 1 || bias.size(0) != n)
    throw ShapeError(
        kOp, str("bias ", bias.describe(), " must have shape [", n, "] for c ", c.describe()));
  if (bias.dtype() != c.dtype())
    throw DTypeError(kOp,
                     str("bias ", bias.describe(), " must have c's dtype (c ", c.describe(), ")"));
}

}  // namespace

void gemm(const Tensor& a, const Tensor& b, Tensor& c, const GemmOptions& opt, Stream stream) {
  check_arg(kOp, "a", a, a, "a");
  check_arg(kOp, "b", b, a, "a");
  check_arg(kOp, "c", c, a, "a");
  check_dim(kOp, "a", a, 2);
  check_dim(kOp, "b", b, 2);
  check_dim(kOp, "c", c, 2);
  check_dtype(kOp, "a", a, kFloatTypes);
  check_same_dtype(kOp, "a", a, "b", b);
  if (c.dtype() != a.dtype() && c.dtype() != DType::f32)
    throw DTypeError(kOp,
                     str("c ", c.describe(), " must have a's dtype or f32 (a ", a.describe(), ")"));

  const int64_t m = opt.trans_a ? a.size(1) : a.size(0);
  const int64_t ka = opt.trans_a ? a.size(0) : a.size(1);
  const int64_t kb = opt.trans_b ? b.size(1) : b.size(0);
  const int64_t n = opt.trans_b ? b.size(0) : b.size(1);
  if (ka != kb)
    throw ShapeError(kOp, str(describe_operands(a, b, c, opt), ": inner dimensions differ (", ka,
                              " vs ", kb, ")"));
  if (c.size(0) != m || c.size(1) != n)
    throw ShapeError(
        kOp, str(describe_operands(a, b, c, opt), ": c must have shape [", m, ", ", n, "]"));
  if (opt.bias) check_bias(*opt.bias, a, c, n);
  if (c.numel() > 0 && (bytes_overlap(c, a) || bytes_overlap(c, b)))
    throw ValueError(kOp, str(describe_operands(a, b, c, opt), ": c overlaps an input"));
  if (opt.bias && c.numel() > 0 && bytes_overlap(c, *opt.bias))
    throw ValueError(kOp, str("c ", c.describe(), " overlaps bias ", opt.bias->describe()));

  if (a.device().is_cuda())
    ZT_ON_CUDA(kOp, cuda::gemm(a, b, c, opt, stream));
  else
    cpu::gemm(a, b, c, opt);
}

}  // namespace zt::kernels
