// The attention kernels' dot product: f32 with 8 independent lanes combined in a fixed order
// (vectorizes, deterministic). One definition, so that the KV-cache attention
// (cached_attention.cpp) rounds exactly as the training attention (attention.cpp).
#pragma once

#include <cstdint>

namespace zt::kernels::cpu {

inline float lane_dot(const float* a, const float* b, int64_t n) {
  float lane[8] = {};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int l = 0; l < 8; ++l)
      lane[l] += a[i + l] * b[i + l];
  float tail = 0.f;
  for (; i < n; ++i)
    tail += a[i] * b[i];
  return ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7])) +
         tail;
}

}  // namespace zt::kernels::cpu
