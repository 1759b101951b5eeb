// Float64 reference for the rotary position embedding (kernels/rope.h): angles as the contract
// defines them (f32 product), cos/sin and the rotation in float64. Shared by test_rope.cpp and
// test_rope_cuda.cpp.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

namespace zt::test {

// x: [b, s, h, d] row-major; positions: [s]; inv_freq: [d / 2]. sign -1 rotates backwards.
inline std::vector<double> rope_ref(const std::vector<double>& x,
                                    const std::vector<int64_t>& positions,
                                    const std::vector<float>& inv_freq, int64_t b, int64_t s,
                                    int64_t h, int64_t d, double sign = 1.0) {
  std::vector<double> y(x.size());
  const int64_t half = d / 2;
  for (int64_t bi = 0; bi < b; ++bi)
    for (int64_t si = 0; si < s; ++si)
      for (int64_t hi = 0; hi < h; ++hi)
        for (int64_t i = 0; i < half; ++i) {
          const float a = static_cast<float>(positions[static_cast<size_t>(si)]) *
                          inv_freq[static_cast<size_t>(i)];
          const double c = std::cos(static_cast<double>(a)),
                       sn = sign * std::sin(static_cast<double>(a));
          const size_t o = static_cast<size_t>(((bi * s + si) * h + hi) * d + i);
          const size_t o2 = o + static_cast<size_t>(half);
          y[o] = x[o] * c - x[o2] * sn;
          y[o2] = x[o2] * c + x[o] * sn;
        }
  return y;
}

}  // namespace zt::test
