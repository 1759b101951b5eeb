// Shared helpers for kernel tests: seeded random tensors (never zeros), float64 comparison with
// per-dtype tolerances, finite-difference gradient checks, and the CUDA skip guard.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "zerotrain/core/device.h"
#include "zerotrain/core/tensor.h"

namespace zt::test {

// Skips the current test when no CUDA device is visible (or the build has no CUDA backend).
#define ZT_SKIP_WITHOUT_CUDA()                                     \
  do {                                                             \
    if (!::zt::cuda_available()) GTEST_SKIP() << "no CUDA device"; \
  } while (0)

// Uniform values in [lo, hi), deterministic for a seed. Values are rounded to `dtype` so that the
// float64 reference sees exactly what the kernel sees.
Tensor random_tensor(const Shape& shape, DType dtype, uint64_t seed, float lo = -1.0f,
                     float hi = 1.0f, Device device = Device::cpu());
std::vector<float> random_floats(size_t n, uint64_t seed, float lo = -1.0f, float hi = 1.0f);
// Integers uniform in [lo, hi).
Tensor random_ints(const Shape& shape, DType dtype, uint64_t seed, int64_t lo, int64_t hi,
                   Device device = Device::cpu());

// The tensor's values as float64 (copied to the host).
std::vector<double> to_doubles(const Tensor& t);

struct Tolerance {
  double atol;
  double rtol;
};
// Defaults for outputs of a few-FLOP-per-element op computed in f32 and stored in `dtype`.
Tolerance tolerance_for(DType dtype);

// Expects |got - ref| <= atol + rtol * |ref| elementwise; on failure reports the worst element.
void expect_close(const std::vector<double>& ref, const std::vector<double>& got, Tolerance tol,
                  const std::string& what);
void expect_close(const std::vector<double>& ref, const Tensor& got, Tolerance tol,
                  const std::string& what);
// Bitwise equality of two tensors' bytes (same dtype and shape).
void expect_bitwise_equal(const Tensor& a, const Tensor& b, const std::string& what);

// Finite-difference check of a backward. `loss` maps inputs to a scalar (computed by running the
// op's forward in f32 and dotting the output with a fixed cotangent, in float64); `grads` are the
// analytic gradients of that scalar for each input (the op's backward fed the cotangent). For
// `directions` random unit directions u, compares <grad, u> with the central difference
// (loss(x + h u) - loss(x - h u)) / 2h; the error measure is selfcheck::directional_check's.
void expect_gradients_match_fd(
    const std::function<double(const std::vector<std::vector<float>>&)>& loss,
    const std::vector<std::vector<float>>& inputs, const std::vector<std::vector<double>>& grads,
    const std::string& what, double h = 1e-2, double rtol = 1e-2, int directions = 6,
    uint64_t seed = 1234);

// tests/fixtures of the source tree: $ZT_SOURCE_DIR/tests/fixtures when set (binaries run away
// from the tree they were built from), otherwise the tree this file was compiled in.
std::filesystem::path fixtures_dir();

// sum_i a[i] * b[i] in float64.
double dot(const std::vector<double>& a, const std::vector<double>& b);

}  // namespace zt::test
