#include "support/test_util.h"

#include "zerotrain/selfcheck/finite_difference.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>

namespace zt::test {

std::vector<float> random_floats(size_t n, uint64_t seed, float lo, float hi) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v)
    x = dist(rng);
  return v;
}

Tensor random_tensor(const Shape& shape, DType dtype, uint64_t seed, float lo, float hi,
                     Device device) {
  return Tensor::from_floats(random_floats(static_cast<size_t>(numel_of(shape)), seed, lo, hi),
                             shape, dtype, device);
}

Tensor random_ints(const Shape& shape, DType dtype, uint64_t seed, int64_t lo, int64_t hi,
                   Device device) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int64_t> dist(lo, hi - 1);
  std::vector<int64_t> v(static_cast<size_t>(numel_of(shape)));
  for (auto& x : v)
    x = dist(rng);
  return Tensor::from_ints(v, shape, dtype, device);
}

std::vector<double> to_doubles(const Tensor& t) {
  std::vector<double> out;
  if (t.dtype() == DType::i32 || t.dtype() == DType::i64 || t.dtype() == DType::u8) {
    for (int64_t x : t.to_ints())
      out.push_back(static_cast<double>(x));
  } else {
    for (float x : t.to_floats())
      out.push_back(x);
  }
  return out;
}

Tolerance tolerance_for(DType dtype) {
  switch (dtype) {
    case DType::f32:
      return {1e-5, 1e-4};
    case DType::f16:
      return {1e-3, 4e-3};
    case DType::bf16:
      return {8e-3, 2e-2};
    default:
      return {0, 0};
  }
}

void expect_close(const std::vector<double>& ref, const std::vector<double>& got, Tolerance tol,
                  const std::string& what) {
  ASSERT_EQ(ref.size(), got.size()) << what << ": element counts differ";
  size_t bad = 0, worst = 0;
  double worst_excess = -1;
  for (size_t i = 0; i < ref.size(); ++i) {
    const double err = std::fabs(got[i] - ref[i]);
    const double allowed = tol.atol + tol.rtol * std::fabs(ref[i]);
    const bool ok = err <= allowed;  // false for NaN
    if (!ok) {
      ++bad;
      const double excess = std::isnan(err) ? 1e300 : err - allowed;
      if (excess > worst_excess) {
        worst_excess = excess;
        worst = i;
      }
    }
  }
  EXPECT_EQ(bad, 0u) << what << ": " << bad << " of " << ref.size()
                     << " elements out of tolerance (atol " << tol.atol << ", rtol " << tol.rtol
                     << "); worst at " << worst << ": got " << (bad ? got[worst] : 0.0) << ", want "
                     << (bad ? ref[worst] : 0.0);
}

void expect_close(const std::vector<double>& ref, const Tensor& got, Tolerance tol,
                  const std::string& what) {
  expect_close(ref, to_doubles(got), tol, what);
}

void expect_bitwise_equal(const Tensor& a, const Tensor& b, const std::string& what) {
  ASSERT_EQ(a.shape(), b.shape()) << what;
  ASSERT_EQ(a.dtype(), b.dtype()) << what;
  Tensor ha = a.contiguous().to(Device::cpu()), hb = b.contiguous().to(Device::cpu());
  if (ha.nbytes() == 0) return;  // empty tensors may have no storage pointer to compare
  EXPECT_EQ(std::memcmp(ha.data(), hb.data(), ha.nbytes()), 0) << what << ": bytes differ";
}

std::filesystem::path fixtures_dir() {
  if (const char* root = std::getenv("ZT_SOURCE_DIR"))
    return std::filesystem::path(root) / "tests" / "fixtures";
  return std::filesystem::path(__FILE__).parent_path().parent_path() / "fixtures";
}

double dot(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i)
    s += a[i] * b[i];
  return s;
}

void expect_gradients_match_fd(
    const std::function<double(const std::vector<std::vector<float>>&)>& loss,
    const std::vector<std::vector<float>>& inputs, const std::vector<std::vector<double>>& grads,
    const std::string& what, double h, double rtol, int directions, uint64_t seed) {
  ASSERT_EQ(inputs.size(), grads.size()) << what;
  std::mt19937_64 rng(seed);
  for (int d = 0; d < directions; ++d) {
    const auto r = selfcheck::directional_check(loss, inputs, grads, h, rng);
    EXPECT_LE(r.error, rtol) << what << ": direction " << d << ": analytic " << r.analytic
                             << " vs central difference " << r.numeric << " (h=" << h << ")";
  }
}

}  // namespace zt::test
