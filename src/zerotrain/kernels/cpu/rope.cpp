// CPU rotary position embedding. cos/sin are computed once per (position, frequency) in f32 and,
// as Hugging Face does, rounded to the activation dtype before use; every product and the sum are
// rounded to that dtype as PyTorch's elementwise ops would. Tokens run in parallel (OpenMP).
// Tested by tests/kernels/test_rope.cpp.
#include "zerotrain/kernels/cpu/rope.h"

#include <cmath>
#include <vector>

#include "zerotrain/kernels/cpu/float_types.h"

namespace zt::kernels::cpu {

namespace {

template <typename T>
void rotate(const Tensor& src, const Tensor& positions, const Tensor& inv_freq, Tensor& dst,
            bool backward) {
  const int64_t B = src.size(0), S = src.size(1), H = src.size(2), D = src.size(3), half = D / 2;
  const std::vector<int64_t> pos = positions.to_ints();
  const auto P = static_cast<int64_t>(pos.size());  // S, or B x S for per-row positions
  const float* inv = inv_freq.data_as<float>();
  // cos and sin (negated for the backward, a rotation by -angle) per (position index, i), rounded
  // to T; token t reads position index t % P.
  std::vector<float> cs(static_cast<size_t>(P * half)), sn(static_cast<size_t>(P * half));
#pragma omp parallel for schedule(static)
  for (int64_t s = 0; s < P; ++s) {
    for (int64_t i = 0; i < half; ++i) {
      const float a = static_cast<float>(pos[static_cast<size_t>(s)]) * inv[i];
      const size_t k = static_cast<size_t>(s * half + i);
      cs[k] = round_to<T>(std::cos(a));
      sn[k] = round_to<T>(backward ? -std::sin(a) : std::sin(a));
    }
  }
  const T* in = static_cast<const T*>(src.data());
  T* out = static_cast<T*>(dst.data());
#pragma omp parallel for schedule(static)
  for (int64_t t = 0; t < B * S; ++t) {
    const size_t trig = static_cast<size_t>((t % P) * half);
    for (int64_t h = 0; h < H; ++h) {
      const int64_t base = (t * H + h) * D;
      for (int64_t i = 0; i < half; ++i) {
        const float c = cs[trig + static_cast<size_t>(i)], s = sn[trig + static_cast<size_t>(i)];
        const float x1 = static_cast<float>(in[base + i]);
        const float x2 = static_cast<float>(in[base + i + half]);
        const float y1 = round_to<T>(x1 * c) - round_to<T>(x2 * s);
        const float y2 = round_to<T>(x2 * c) + round_to<T>(x1 * s);
        out[base + i] = T(y1);
        out[base + i + half] = T(y2);
      }
    }
  }
}

}  // namespace

void rope_rotate(const Tensor& src, const Tensor& positions, const Tensor& inv_freq, Tensor& dst,
                 bool backward) {
  visit_float(src.dtype(), backward ? "rope_backward" : "rope_forward",
              [&](auto tag) { rotate<decltype(tag)>(src, positions, inv_freq, dst, backward); });
}

}  // namespace zt::kernels::cpu
