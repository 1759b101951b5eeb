// CPU softmax cross-entropy against the float64 reference (reference_cross_entropy.h) for f32,
// bf16 and f16 logits, the backward against finite differences, fused == forward + backward
// bitwise, ignored rows, out-of-range targets, extreme logits, and argument errors.
#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <string>
#include <vector>

#include "kernels/reference_cross_entropy.h"
#include "support/test_util.h"
#include "zerotrain/kernels/cross_entropy.h"

namespace zt {
namespace {

using kernels::cross_entropy_backward;
using kernels::cross_entropy_forward;
using kernels::cross_entropy_fused;

constexpr int64_t kIgnore = -100;

// Targets uniform in [0, V), with every fourth row (1, 5, 9, ...) set to `ignore`.
std::vector<int64_t> make_targets(int64_t N, int64_t V, uint64_t seed, int64_t ignore = kIgnore) {
  std::vector<int64_t> t = test::random_ints({N}, DType::i64, seed, 0, V).to_ints();
  for (int64_t n = 1; n < N; n += 4)
    t[n] = ignore;
  return t;
}

// Losses and lse are f32 whatever the logits' dtype (the inputs are exact in the reference).
test::Tolerance loss_tolerance() {
  return {2e-5, 2e-6};
}

// Gradients are rounded to the logits' dtype; f16 small probabilities are subnormal, rounded to
// within half of 2^-24.
test::Tolerance grad_tolerance(DType t) {
  switch (t) {
    case DType::f16:
      return {3.1e-8, 1.2e-3};
    case DType::bf16:
      return {1e-12, 4.5e-3};
    default:
      return {1e-12, 2e-5};
  }
}

struct Case {
  DType dtype;
  DType index;
  int64_t N, V;
};

std::string name_of(const Case& c) {
  return std::string(dtype_name(c.dtype)) + " " + std::string(dtype_name(c.index)) +
         " N=" + std::to_string(c.N) + " V=" + std::to_string(c.V);
}

std::vector<Case> reference_cases() {
  std::vector<Case> cases;
  for (DType d : {DType::f32, DType::bf16, DType::f16})
    for (int64_t V : {1, 7, 1000, 50257})
      cases.push_back({d, V % 2 ? DType::i64 : DType::i32, V > 10000 ? 5 : 9, V});
  return cases;
}

TEST(CrossEntropyCpu, ForwardMatchesFloat64Reference) {
  uint64_t seed = 10;
  for (const Case& c : reference_cases()) {
    SCOPED_TRACE(name_of(c));
    Tensor logits = test::random_tensor({c.N, c.V}, c.dtype, ++seed, -8.f, 8.f);
    const std::vector<int64_t> tv = make_targets(c.N, c.V, ++seed);
    Tensor targets = Tensor::from_ints(tv, {c.N}, c.index);
    Tensor losses = Tensor::empty({c.N}, DType::f32), lse = Tensor::empty({c.N}, DType::f32);
    cross_entropy_forward(logits, targets, losses, lse);
    const auto ref = test::cross_entropy_reference(test::to_doubles(logits), tv, c.V, kIgnore, 1.0);
    test::expect_close(ref.losses, losses, loss_tolerance(), "losses");
    test::expect_close(ref.lse, lse, loss_tolerance(), "lse");
    EXPECT_EQ(losses.to_floats()[1], 0.f) << "ignored row";
  }
}

TEST(CrossEntropyCpu, BackwardMatchesFloat64Reference) {
  uint64_t seed = 100;
  const double scale = 0.37;
  for (const Case& c : reference_cases()) {
    SCOPED_TRACE(name_of(c));
    Tensor logits = test::random_tensor({c.N, c.V}, c.dtype, ++seed, -8.f, 8.f);
    const std::vector<int64_t> tv = make_targets(c.N, c.V, ++seed);
    Tensor targets = Tensor::from_ints(tv, {c.N}, c.index);
    Tensor losses = Tensor::empty({c.N}, DType::f32), lse = Tensor::empty({c.N}, DType::f32);
    cross_entropy_forward(logits, targets, losses, lse);
    Tensor dlogits = Tensor::empty({c.N, c.V}, c.dtype);
    cross_entropy_backward(logits, targets, lse, dlogits, static_cast<float>(scale));
    const auto ref =
        test::cross_entropy_reference(test::to_doubles(logits), tv, c.V, kIgnore, scale);
    test::expect_gradient_close(ref, dlogits, tv, c.V, scale, grad_tolerance(c.dtype), "dlogits");
  }
}

TEST(CrossEntropyCpu, BackwardMatchesFiniteDifferences) {
  const int64_t N = 4, V = 11;
  const float scale = 0.5f;
  const std::vector<int64_t> tv = make_targets(N, V, 7);  // row 1 ignored
  Tensor targets = Tensor::from_ints(tv, {N}, DType::i64);
  const std::vector<float> x0 = test::random_floats(N * V, 8, -3.f, 3.f);
  // The scalar is scale * sum of the row losses, whose gradient the backward computes.
  auto loss = [&](const std::vector<std::vector<float>>& in) {
    Tensor logits = Tensor::from_floats(in[0], {N, V}, DType::f32);
    Tensor losses = Tensor::empty({N}, DType::f32), lse = Tensor::empty({N}, DType::f32);
    cross_entropy_forward(logits, targets, losses, lse);
    double total = 0;
    for (float l : losses.to_floats())
      total += l;
    return scale * total;
  };
  Tensor logits = Tensor::from_floats(x0, {N, V}, DType::f32);
  Tensor losses = Tensor::empty({N}, DType::f32), lse = Tensor::empty({N}, DType::f32);
  cross_entropy_forward(logits, targets, losses, lse);
  Tensor dlogits = Tensor::empty({N, V}, DType::f32);
  cross_entropy_backward(logits, targets, lse, dlogits, scale);
  test::expect_gradients_match_fd(loss, {x0}, {test::to_doubles(dlogits)}, "cross_entropy");
}

TEST(CrossEntropyCpu, FusedEqualsForwardThenBackwardBitwise) {
  uint64_t seed = 200;
  for (DType d : {DType::f32, DType::bf16, DType::f16}) {
    for (int64_t V : {1, 7, 1000, 50257}) {
      SCOPED_TRACE(std::string(dtype_name(d)) + " V=" + std::to_string(V));
      const int64_t N = 6;
      Tensor logits = test::random_tensor({N, V}, d, ++seed, -8.f, 8.f);
      Tensor targets = Tensor::from_ints(make_targets(N, V, ++seed), {N}, DType::i32);
      Tensor losses = Tensor::empty({N}, DType::f32), lse = Tensor::empty({N}, DType::f32);
      cross_entropy_forward(logits, targets, losses, lse);
      Tensor dlogits = Tensor::empty({N, V}, d);
      cross_entropy_backward(logits, targets, lse, dlogits, 0.25f);

      Tensor fused = logits.clone();
      Tensor fused_losses = Tensor::empty({N}, DType::f32);
      cross_entropy_fused(fused, targets, fused_losses, 0.25f);
      test::expect_bitwise_equal(losses, fused_losses, "losses");
      test::expect_bitwise_equal(dlogits, fused, "gradient");
    }
  }
}

TEST(CrossEntropyCpu, BackwardInPlaceEqualsOutOfPlace) {
  const int64_t N = 5, V = 333;
  Tensor logits = test::random_tensor({N, V}, DType::bf16, 31, -8.f, 8.f);
  Tensor targets = Tensor::from_ints(make_targets(N, V, 32), {N}, DType::i64);
  Tensor losses = Tensor::empty({N}, DType::f32), lse = Tensor::empty({N}, DType::f32);
  cross_entropy_forward(logits, targets, losses, lse);
  Tensor out = Tensor::empty({N, V}, DType::bf16);
  cross_entropy_backward(logits, targets, lse, out, 2.f);
  cross_entropy_backward(logits, targets, lse, logits, 2.f);
  test::expect_bitwise_equal(out, logits, "in-place gradient");
}

TEST(CrossEntropyCpu, IgnoredRowsGetZeroLossAndGradient) {
  const int64_t N = 4, V = 10;
  Tensor logits = test::random_tensor({N, V}, DType::f32, 41, -2.f, 2.f);
  // ignore_index inside the class range: the class is simply never a target.
  Tensor targets = Tensor::from_ints({3, 0, 3, 9}, {N}, DType::i32);
  Tensor losses = Tensor::empty({N}, DType::f32), lse = Tensor::empty({N}, DType::f32);
  cross_entropy_forward(logits, targets, losses, lse, /*ignore_index=*/3);
  const auto l = losses.to_floats();
  EXPECT_EQ(l[0], 0.f);
  EXPECT_EQ(l[2], 0.f);
  EXPECT_GT(l[1], 0.f);
  EXPECT_GT(l[3], 0.f);
  cross_entropy_fused(logits, targets, losses, 1.f, 3);
  const auto g = logits.to_floats();
  for (int64_t i = 0; i < V; ++i) {
    EXPECT_EQ(g[0 * V + i], 0.f) << i;
    EXPECT_EQ(g[2 * V + i], 0.f) << i;
  }
  double row_sum = 0;  // softmax - onehot sums to zero over a row
  for (int64_t i = 0; i < V; ++i)
    row_sum += g[V + i];
  EXPECT_NEAR(row_sum, 0.0, 1e-6);
}

TEST(CrossEntropyCpu, OutOfRangeTargetThrowsNamingRowAndValue) {
  const int64_t N = 4, V = 7;
  Tensor logits = test::random_tensor({N, V}, DType::f32, 51);
  Tensor losses = Tensor::empty({N}, DType::f32), lse = Tensor::empty({N}, DType::f32);
  Tensor dlogits = Tensor::empty({N, V}, DType::f32);
  for (int64_t bad : {int64_t{7}, int64_t{-1}, int64_t{-100}}) {
    SCOPED_TRACE(bad);
    Tensor targets = Tensor::from_ints({0, 6, bad, 1}, {N}, DType::i64);
    const int64_t ignore = bad == -100 ? -1 : -100;
    try {
      cross_entropy_forward(logits, targets, losses, lse, ignore);
      FAIL() << "expected ValueError";
    } catch (const ValueError& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find("[cross_entropy_forward]"), std::string::npos) << msg;
      EXPECT_NE(msg.find("targets[2] = " + std::to_string(bad)), std::string::npos) << msg;
    }
    EXPECT_THROW(cross_entropy_backward(logits, targets, lse, dlogits, 1.f, ignore), ValueError);
    Tensor copy = logits.clone();
    EXPECT_THROW(cross_entropy_fused(copy, targets, losses, 1.f, ignore), ValueError);
    test::expect_bitwise_equal(copy, logits, "logits untouched after the error");
  }
}

TEST(CrossEntropyCpu, ExtremeLogitsStayFinite) {
  const int64_t N = 6, V = 1001;
  for (DType d : {DType::f32, DType::bf16, DType::f16}) {
    SCOPED_TRACE(dtype_name(d));
    // Values of +-80 (exp(80) overflows f32 without the max shift), mixed with ordinary ones.
    std::vector<float> x = test::random_floats(N * V, 61, -4.f, 4.f);
    for (int64_t i = 0; i < N * V; i += 3)
      x[i] = (i / 3) % 2 ? 80.f : -80.f;
    Tensor logits = Tensor::from_floats(x, {N, V}, d);
    const std::vector<int64_t> tv = {0, 1, 3, 500, 1000, 999};  // -80, ordinary and +80 targets
    Tensor targets = Tensor::from_ints(tv, {N}, DType::i64);
    Tensor losses = Tensor::empty({N}, DType::f32), lse = Tensor::empty({N}, DType::f32);
    cross_entropy_forward(logits, targets, losses, lse);
    const auto ref = test::cross_entropy_reference(test::to_doubles(logits), tv, V, kIgnore, 1.0);
    test::expect_close(ref.losses, losses, loss_tolerance(), "losses");
    Tensor dlogits = Tensor::empty({N, V}, d);
    cross_entropy_backward(logits, targets, lse, dlogits, 1.f);
    test::expect_gradient_close(ref, dlogits, tv, V, 1.0, grad_tolerance(d), "dlogits");
  }
}

TEST(CrossEntropyCpu, ResultsDoNotDependOnThreadCount) {
  const int64_t N = 37, V = 4099;
  Tensor logits = test::random_tensor({N, V}, DType::bf16, 71, -8.f, 8.f);
  Tensor targets = Tensor::from_ints(make_targets(N, V, 72), {N}, DType::i32);
  auto run = [&](int threads) {
    const int saved = omp_get_max_threads();
    omp_set_num_threads(threads);
    Tensor x = logits.clone();
    Tensor losses = Tensor::empty({N}, DType::f32);
    cross_entropy_fused(x, targets, losses, 1.f);
    omp_set_num_threads(saved);
    return std::make_pair(x, losses);
  };
  const auto [g1, l1] = run(1);
  const auto [g3, l3] = run(3);
  test::expect_bitwise_equal(g1, g3, "gradient");
  test::expect_bitwise_equal(l1, l3, "losses");
}

TEST(CrossEntropyCpu, EmptyBatchIsANoOp) {
  Tensor logits = Tensor::empty({0, 5}, DType::f32);
  Tensor targets = Tensor::empty({0}, DType::i64);
  Tensor losses = Tensor::empty({0}, DType::f32), lse = Tensor::empty({0}, DType::f32);
  EXPECT_NO_THROW(cross_entropy_forward(logits, targets, losses, lse));
  EXPECT_NO_THROW(cross_entropy_backward(logits, targets, lse, logits, 1.f));
  EXPECT_NO_THROW(cross_entropy_fused(logits, targets, losses, 1.f));
}

// Expects `f` to throw E with a message holding every piece of `parts`.
template <typename E, typename F>
void expect_error(F&& f, const std::vector<std::string>& parts) {
  try {
    f();
    ADD_FAILURE() << "expected an exception";
  } catch (const E& e) {
    const std::string msg = e.what();
    for (const auto& p : parts)
      EXPECT_NE(msg.find(p), std::string::npos) << msg << " lacks " << p;
  }
}

TEST(CrossEntropyCpu, BadArgumentsThrowTypedErrors) {
  Tensor logits = Tensor::empty({4, 7}, DType::f32);
  Tensor targets = Tensor::from_ints({0, 1, 2, 3}, {4}, DType::i64);
  Tensor losses = Tensor::empty({4}, DType::f32), lse = Tensor::empty({4}, DType::f32);
  Tensor dlogits = Tensor::empty({4, 7}, DType::f32);

  Tensor short_targets = Tensor::from_ints({0, 1, 2}, {3}, DType::i64);
  expect_error<ShapeError>([&] { cross_entropy_forward(logits, short_targets, losses, lse); },
                           {"[cross_entropy_forward]", "i64[3]", "f32[4, 7]"});
  Tensor long_losses = Tensor::empty({5}, DType::f32);
  expect_error<ShapeError>([&] { cross_entropy_fused(logits, targets, long_losses, 1.f); },
                           {"[cross_entropy_fused]", "f32[5]", "f32[4, 7]"});
  Tensor wide = Tensor::empty({4, 8}, DType::f32);
  expect_error<ShapeError>([&] { cross_entropy_backward(logits, targets, lse, wide, 1.f); },
                           {"[cross_entropy_backward]", "f32[4, 8]", "f32[4, 7]"});
  Tensor flat = Tensor::empty({28}, DType::f32);
  expect_error<ShapeError>([&] { cross_entropy_forward(flat, targets, losses, lse); },
                           {"[cross_entropy_forward]", "f32[28]"});
  Tensor no_classes = Tensor::empty({4, 0}, DType::f32);
  EXPECT_THROW(cross_entropy_forward(no_classes, targets, losses, lse), ShapeError);
  Tensor strided = Tensor::empty({7, 4}, DType::f32).transpose(0, 1);
  expect_error<ShapeError>([&] { cross_entropy_forward(strided, targets, losses, lse); },
                           {"[cross_entropy_forward]", "contiguous"});

  Tensor int_logits = Tensor::empty({4, 7}, DType::i32);
  expect_error<DTypeError>([&] { cross_entropy_forward(int_logits, targets, losses, lse); },
                           {"[cross_entropy_forward]", "logits"});
  Tensor float_targets = Tensor::empty({4}, DType::f32);
  expect_error<DTypeError>([&] { cross_entropy_forward(logits, float_targets, losses, lse); },
                           {"[cross_entropy_forward]", "targets"});
  Tensor bf16_lse = Tensor::empty({4}, DType::bf16);
  expect_error<DTypeError>([&] { cross_entropy_forward(logits, targets, losses, bf16_lse); },
                           {"[cross_entropy_forward]", "lse"});
  Tensor bf16_dlogits = Tensor::empty({4, 7}, DType::bf16);
  expect_error<DTypeError>([&] { cross_entropy_backward(logits, targets, lse, bf16_dlogits, 1.f); },
                           {"[cross_entropy_backward]", "bf16[4, 7]", "f32[4, 7]"});

  // A tensor labelled as CUDA memory (never dereferenced: the device check comes first).
  float fake[4];
  Tensor cuda_losses = Tensor::wrap(fake, {4}, DType::f32, Device::cuda(0));
  expect_error<DeviceError>([&] { cross_entropy_forward(logits, targets, cuda_losses, lse); },
                            {"[cross_entropy_forward]", "cuda:0", "on cpu"});
}

}  // namespace
}  // namespace zt
