// Front-end of the rotary position embedding: validates the arguments (typed errors naming the op
// and the tensors), then runs the CPU or CUDA kernel; also the host helper rope_inv_freq.
// Tested by tests/kernels/test_rope.cpp (CPU) and tests/kernels/test_rope_cuda.cpp.
#include "zerotrain/kernels/rope.h"

#include <cmath>

#include "zerotrain/kernels/check.h"
#include "zerotrain/kernels/cpu/rope.h"
#include "zerotrain/kernels/cuda/rope.h"
#include "zerotrain/kernels/dispatch.h"

namespace zt::kernels {

namespace {

// src: [B, S, H, D] with D even; positions: [S] or [B, S] i32/i64; inv_freq: f32 [D/2]; dst like
// src, either the same memory as src or not overlapping it.
void check_rope(std::string_view op, std::string_view src_name, const Tensor& src,
                const Tensor& positions, const Tensor& inv_freq, std::string_view dst_name,
                const Tensor& dst) {
  check_defined(op, src_name, src);
  check_contiguous(op, src_name, src);
  check_dim(op, src_name, src, 4);
  check_dtype(op, src_name, src, kFloatTypes);
  const int64_t D = src.size(3);
  if (D < 2 || D % 2 != 0)
    throw ShapeError(op,
                     str(src_name, " ", src.describe(), ": head dimension must be even and >= 2"));
  check_arg(op, "positions", positions, src, src_name);
  check_dtype(op, "positions", positions, kIndexTypes);
  const bool shared = positions.dim() == 1 && positions.size(0) == src.size(1);
  const bool per_row =
      positions.dim() == 2 && positions.size(0) == src.size(0) && positions.size(1) == src.size(1);
  if (!shared && !per_row)
    throw ShapeError(op, str("positions ", positions.describe(),
                             " must hold one position per sequence index ([S]) or per token "
                             "([B, S]) of ",
                             src_name, " ", src.describe()));
  check_arg(op, "inv_freq", inv_freq, src, src_name);
  check_dtype(op, "inv_freq", inv_freq, {DType::f32});
  if (inv_freq.dim() != 1 || inv_freq.size(0) != D / 2)
    throw ShapeError(op, str("inv_freq ", inv_freq.describe(), " must hold head_dim / 2 = ", D / 2,
                             " frequencies for ", src_name, " ", src.describe()));
  check_arg(op, dst_name, dst, src, src_name);
  check_same_shape(op, src_name, src, dst_name, dst);
  check_same_dtype(op, src_name, src, dst_name, dst);
  if (src.storage() == dst.storage() && src.data() != dst.data()) {
    const auto* a = static_cast<const char*>(src.data());
    const auto* b = static_cast<const char*>(dst.data());
    if (a < b + dst.nbytes() && b < a + src.nbytes())
      throw ValueError(op, str(dst_name, " ", dst.describe(), " partially overlaps ", src_name, " ",
                               src.describe(), " (it must be the same memory or disjoint)"));
  }
}

void rotate(std::string_view op, const Tensor& src, const Tensor& positions, const Tensor& inv_freq,
            Tensor& dst, bool backward, Stream stream) {
  if (src.device().is_cuda())
    ZT_ON_CUDA(op, cuda::rope_rotate(src, positions, inv_freq, dst, backward, stream));
  else
    cpu::rope_rotate(src, positions, inv_freq, dst, backward);
}

}  // namespace

void rope_forward(const Tensor& x, const Tensor& positions, const Tensor& inv_freq, Tensor& y,
                  Stream stream) {
  constexpr std::string_view op = "rope_forward";
  check_rope(op, "x", x, positions, inv_freq, "y", y);
  rotate(op, x, positions, inv_freq, y, false, stream);
}

void rope_backward(const Tensor& dy, const Tensor& positions, const Tensor& inv_freq, Tensor& dx,
                   Stream stream) {
  constexpr std::string_view op = "rope_backward";
  check_rope(op, "dy", dy, positions, inv_freq, "dx", dx);
  rotate(op, dy, positions, inv_freq, dx, true, stream);
}

Tensor rope_inv_freq(int64_t head_dim, double theta) {
  if (head_dim < 2 || head_dim % 2 != 0)
    throw ValueError("rope_inv_freq", str("head_dim must be even and >= 2, got ", head_dim));
  if (!(theta > 0.0) || !std::isfinite(theta))
    throw ValueError("rope_inv_freq", str("theta must be finite and > 0, got ", theta));
  Tensor t = Tensor::empty({head_dim / 2}, DType::f32);
  float* p = t.data_as<float>();
  // As Hugging Face computes it, in f32: 1 / theta ** (arange(0, D, 2) / D).
  const float base = static_cast<float>(theta), d = static_cast<float>(head_dim);
  for (int64_t i = 0; i < head_dim / 2; ++i)
    p[i] = 1.0f / std::pow(base, static_cast<float>(2 * i) / d);
  return t;
}

}  // namespace zt::kernels
