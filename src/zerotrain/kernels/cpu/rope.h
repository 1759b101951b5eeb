// CPU rotary position embedding. Arguments are validated by the front-end (kernels/rope.cpp); see
// kernels/rope.h for the contract. Tested by tests/kernels/test_rope.cpp.
#pragma once

#include "zerotrain/core/tensor.h"

namespace zt::kernels::cpu {

// dst = src rotated by +angle (forward) or -angle (backward); dst may alias src.
void rope_rotate(const Tensor& src, const Tensor& positions, const Tensor& inv_freq, Tensor& dst,
                 bool backward);

}  // namespace zt::kernels::cpu
