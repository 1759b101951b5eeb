// Front-end of the softmax cross-entropy family: argument checks, then the CPU or CUDA kernel.
// Tested by tests/kernels/test_cross_entropy.cpp (CPU, bad inputs) and test_cross_entropy_cuda.cpp.
#include "zerotrain/kernels/cross_entropy.h"

#include "zerotrain/kernels/check.h"
#include "zerotrain/kernels/cpu/cross_entropy.h"
#include "zerotrain/kernels/dispatch.h"
#if ZT_WITH_CUDA
#include "zerotrain/kernels/cuda/cross_entropy.h"
#endif

namespace zt::kernels {

namespace {

// logits: [N, V] floating, V >= 1.
void check_logits(std::string_view op, const Tensor& logits) {
  check_defined(op, "logits", logits);
  check_contiguous(op, "logits", logits);
  check_dim(op, "logits", logits, 2);
  check_dtype(op, "logits", logits, kFloatTypes);
  if (logits.size(1) < 1)
    throw ShapeError(op, str("logits ", logits.describe(), ": the vocabulary dimension is empty"));
}

// A per-row tensor: [N] with N = logits.size(0), on logits' device.
void check_rows(std::string_view op, std::string_view name, const Tensor& t, const Tensor& logits) {
  check_arg(op, name, t, logits, "logits");
  if (t.dim() != 1 || t.size(0) != logits.size(0))
    throw ShapeError(op, str(name, " ", t.describe(), " and logits ", logits.describe(),
                             ": expected ", name, " of shape [", logits.size(0), "]"));
}

void check_targets(std::string_view op, const Tensor& targets, const Tensor& logits) {
  check_rows(op, "targets", targets, logits);
  check_dtype(op, "targets", targets, kIndexTypes);
}

void check_f32_rows(std::string_view op, std::string_view name, const Tensor& t,
                    const Tensor& logits) {
  check_rows(op, name, t, logits);
  check_dtype(op, name, t, {DType::f32});
}

}  // namespace

void cross_entropy_forward(const Tensor& logits, const Tensor& targets, Tensor& losses, Tensor& lse,
                           int64_t ignore_index, Stream stream) {
  constexpr std::string_view op = "cross_entropy_forward";
  check_logits(op, logits);
  check_targets(op, targets, logits);
  check_f32_rows(op, "losses", losses, logits);
  check_f32_rows(op, "lse", lse, logits);
  if (logits.size(0) == 0) return;
  if (logits.device().is_cuda())
    ZT_ON_CUDA(op, cuda::cross_entropy_forward(logits, targets, losses, lse, ignore_index, stream));
  else
    cpu::cross_entropy_forward(logits, targets, losses, lse, ignore_index);
}

void cross_entropy_backward(const Tensor& logits, const Tensor& targets, const Tensor& lse,
                            Tensor& dlogits, float grad_scale, int64_t ignore_index,
                            Stream stream) {
  constexpr std::string_view op = "cross_entropy_backward";
  check_logits(op, logits);
  check_targets(op, targets, logits);
  check_f32_rows(op, "lse", lse, logits);
  check_arg(op, "dlogits", dlogits, logits, "logits");
  check_same_shape(op, "dlogits", dlogits, "logits", logits);
  check_same_dtype(op, "dlogits", dlogits, "logits", logits);
  if (logits.size(0) == 0) return;
  if (logits.device().is_cuda())
    ZT_ON_CUDA(op, cuda::cross_entropy_backward(logits, targets, lse, dlogits, grad_scale,
                                                ignore_index, stream));
  else
    cpu::cross_entropy_backward(logits, targets, lse, dlogits, grad_scale, ignore_index);
}

void cross_entropy_fused(Tensor& logits, const Tensor& targets, Tensor& losses, float grad_scale,
                         int64_t ignore_index, Stream stream) {
  constexpr std::string_view op = "cross_entropy_fused";
  check_logits(op, logits);
  check_targets(op, targets, logits);
  check_f32_rows(op, "losses", losses, logits);
  if (logits.size(0) == 0) return;
  if (logits.device().is_cuda())
    ZT_ON_CUDA(
        op, cuda::cross_entropy_fused(logits, targets, losses, grad_scale, ignore_index, stream));
  else
    cpu::cross_entropy_fused(logits, targets, losses, grad_scale, ignore_index);
}

}  // namespace zt::kernels
