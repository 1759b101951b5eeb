// CPU reductions: sum, max, sum_rows and global_l2_norm against float64 references for
// f32/f16/bf16 at sizes 1..10^6, NaN propagation, empty inputs, bitwise independence from the
// OpenMP thread count, and the front-end's typed errors.
// Run: zerotrain_tests --gtest_filter='Reduce.*'
#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <limits>

#include "kernels/reference_reduce.h"
#include "kernels/ulp.h"
#include "support/test_util.h"
#include "zerotrain/kernels/reduce.h"

namespace zt {
namespace {

constexpr DType kDTypes[] = {DType::f32, DType::f16, DType::bf16};
constexpr int64_t kSizes[] = {1, 7, 1003, 65537, 1000000};
const float kNaN = std::numeric_limits<float>::quiet_NaN();

float run_sum(const Tensor& x) {
  Tensor out = Tensor::empty({1}, DType::f32);
  out.fill(-12345.0);
  kernels::sum(x, out);
  return out.to_floats()[0];
}

float run_max(const Tensor& x) {
  Tensor out = Tensor::empty({1}, DType::f32);
  out.fill(-12345.0);
  kernels::max(x, out);
  return out.to_floats()[0];
}

float run_l2(const std::vector<Tensor>& xs) {
  Tensor out = Tensor::empty({1}, DType::f32);
  out.fill(-12345.0);
  kernels::global_l2_norm(xs, out);
  return out.to_floats()[0];
}

// A result accumulated in f64 and rounded once to f32.
void expect_f64_accurate(double got, const test::SumRef& want, const std::string& what) {
  EXPECT_LE(std::fabs(got - want.sum), 1e-7 * std::fabs(want.sum) + 1e-12 * want.abs_sum)
      << what << ": got " << got << ", want " << want.sum;
}

TEST(Reduce, SumMatchesFloat64Reference) {
  for (DType dtype : kDTypes)
    for (int64_t n : kSizes) {
      Tensor x = test::random_tensor({n}, dtype, 41 + n, -1.f, 3.f);
      expect_f64_accurate(run_sum(x), test::sum_ref(x),
                          str("sum ", dtype_name(dtype), "[", n, "]"));
    }
}

TEST(Reduce, MaxIsExact) {
  for (DType dtype : kDTypes)
    for (int64_t n : kSizes) {
      Tensor x = test::random_tensor({n}, dtype, 43 + n, -5.f, -1.f);  // all negative
      double want = -std::numeric_limits<double>::infinity();
      for (double v : test::to_doubles(x))
        want = std::max(want, v);
      EXPECT_EQ(run_max(x), want) << dtype_name(dtype) << "[" << n << "]";
    }
}

TEST(Reduce, NaNPropagatesThroughSumAndMax) {
  for (DType dtype : kDTypes)
    for (int64_t n : {int64_t{1}, int64_t{7}, int64_t{65537}}) {
      for (int64_t at : {int64_t{0}, n / 2, n - 1}) {
        std::vector<float> v = test::random_floats(static_cast<size_t>(n), 47);
        v[at] = kNaN;
        Tensor x = Tensor::from_floats(v, {n}, dtype);
        EXPECT_TRUE(std::isnan(run_sum(x))) << dtype_name(dtype) << "[" << n << "] NaN at " << at;
        EXPECT_TRUE(std::isnan(run_max(x))) << dtype_name(dtype) << "[" << n << "] NaN at " << at;
        EXPECT_TRUE(std::isnan(run_l2({x}))) << dtype_name(dtype) << "[" << n << "] NaN at " << at;
      }
    }
}

TEST(Reduce, EmptyInputs) {
  EXPECT_EQ(run_sum(Tensor::empty({0}, DType::f32)), 0.f);
  EXPECT_EQ(run_l2({}), 0.f);
  EXPECT_EQ(run_l2({Tensor::empty({0}, DType::bf16), Tensor::empty({3, 0}, DType::f32)}), 0.f);
  Tensor out = Tensor::empty({1}, DType::f32);
  EXPECT_THROW(kernels::max(Tensor::empty({0}, DType::f32), out), ValueError);
  Tensor sums = Tensor::empty({5}, DType::f32);
  kernels::sum_rows(Tensor::empty({0, 5}, DType::f32), sums);
  EXPECT_EQ(sums.to_floats(), std::vector<float>(5, 0.f));
}

TEST(Reduce, SumRowsMatchesFloat64Reference) {
  const Shape shapes[] = {{1, 1}, {7, 3}, {1003, 65}, {513, 1027}, {3, 4099}};
  for (DType dtype : kDTypes)
    for (const Shape& shape : shapes)
      for (DType out_dtype : {DType::f32, dtype})
        for (bool accumulate : {false, true}) {
          const std::string what = str("sum_rows ", dtype_name(dtype), to_string(shape), " -> ",
                                       dtype_name(out_dtype), accumulate ? " accumulate" : "");
          Tensor x = test::random_tensor(shape, dtype, 53, -1.f, 2.f);
          Tensor out = test::random_tensor({shape[1]}, out_dtype, 59, -4.f, 4.f);
          const auto want =
              test::sum_rows_ref(x, accumulate ? test::to_doubles(out) : std::vector<double>{});
          kernels::sum_rows(x, out, accumulate);
          const auto got = test::to_doubles(out);
          for (size_t c = 0; c < want.size(); ++c) {
            if (out_dtype == DType::f32) {
              expect_f64_accurate(got[c], want[c], str(what, " column ", c));
            } else {  // one rounding to the output dtype, of f64 then f32: within one ulp
              EXPECT_LE(std::fabs(got[c] - want[c].sum), test::ulp_of(out_dtype, want[c].sum))
                  << what << " column " << c << ": got " << got[c] << ", want " << want[c].sum;
            }
          }
        }
}

TEST(Reduce, GlobalL2NormOfMixedTensors) {
  std::vector<Tensor> xs = {test::random_tensor({1}, DType::f32, 61),
                            test::random_tensor({7}, DType::bf16, 62),
                            test::random_tensor({1003}, DType::f16, 63),
                            Tensor::empty({0}, DType::f32),
                            test::random_tensor({65537}, DType::f32, 64),
                            test::random_tensor({1000, 1000}, DType::bf16, 65),
                            test::random_tensor({3, 5, 7}, DType::f16, 66, -100.f, 100.f)};
  const double want = test::l2_ref(xs);
  EXPECT_LE(std::fabs(run_l2(xs) - want), 1e-7 * want) << "got " << run_l2(xs) << ", want " << want;
  // Many small tensors.
  std::vector<Tensor> many;
  for (int i = 0; i < 300; ++i)
    many.push_back(test::random_tensor({1 + (i * 37) % 5000}, kDTypes[i % 3], 100 + i));
  const double want_many = test::l2_ref(many);
  EXPECT_LE(std::fabs(run_l2(many) - want_many), 1e-7 * want_many);
}

TEST(Reduce, CpuResultsDoNotDependOnThreadCount) {
  Tensor x = test::random_tensor({1000003}, DType::bf16, 71);
  Tensor m = test::random_tensor({2051, 300}, DType::f32, 72);
  std::vector<Tensor> xs = {x, m, test::random_tensor({12345}, DType::f16, 73)};
  auto run_all = [&] {
    std::vector<Tensor> r;
    for (int k = 0; k < 4; ++k)
      r.push_back(Tensor::empty({1}, DType::f32));
    kernels::sum(x, r[0]);
    kernels::max(x, r[1]);
    kernels::global_l2_norm(xs, r[2]);
    r[3] = Tensor::empty({300}, DType::f32);
    kernels::sum_rows(m, r[3]);
    return r;
  };
  const int saved = omp_get_max_threads();
  omp_set_num_threads(1);
  const std::vector<Tensor> want = run_all();
  for (int threads : {2, 3, 5, 8}) {
    omp_set_num_threads(threads);
    const std::vector<Tensor> got = run_all();
    const char* names[] = {"sum", "max", "global_l2_norm", "sum_rows"};
    for (size_t k = 0; k < want.size(); ++k)
      test::expect_bitwise_equal(want[k], got[k], str(names[k], " with ", threads, " threads"));
  }
  omp_set_num_threads(saved);
}

template <typename E, typename F>
void expect_error(F&& f, const std::vector<std::string>& parts) {
  try {
    f();
    ADD_FAILURE() << "expected an error mentioning " << parts[0];
  } catch (const E& e) {
    for (const std::string& p : parts)
      EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what() << " lacks " << p;
  }
}

TEST(Reduce, BadArgumentsThrowTypedErrors) {
  Tensor x = Tensor::empty({4, 6}, DType::bf16);
  Tensor out2 = Tensor::empty({2}, DType::f32), out_bf = Tensor::empty({1}, DType::bf16);
  expect_error<ShapeError>([&] { kernels::sum(x, out2); }, {"[sum]", "f32[2] on cpu", "[1]"});
  expect_error<DTypeError>([&] { kernels::max(x, out_bf); }, {"[max]", "bf16[1] on cpu", "f32"});
  Tensor ints = Tensor::empty({3}, DType::i64), out = Tensor::empty({1}, DType::f32);
  expect_error<DTypeError>([&] { kernels::sum(ints, out); }, {"[sum]", "i64[3]"});
  expect_error<ShapeError>([&] { kernels::sum(x.transpose(0, 1), out); }, {"[sum]", "contiguous"});

  Tensor cols7 = Tensor::empty({7}, DType::f32), cols_f16 = Tensor::empty({6}, DType::f16);
  expect_error<ShapeError>([&] { kernels::sum_rows(x, cols7); },
                           {"[sum_rows]", "bf16[4, 6] on cpu", "f32[7] on cpu"});
  expect_error<DTypeError>([&] { kernels::sum_rows(x, cols_f16); }, {"[sum_rows]", "f16[6]"});
  expect_error<ShapeError>([&] { kernels::sum_rows(x.flatten(), cols7); },
                           {"[sum_rows]", "bf16[24]", "2 dimensions"});

  Tensor ok = Tensor::empty({5}, DType::f32);
  expect_error<DTypeError>(
      [&] {
        kernels::global_l2_norm({ok, ints}, out);
      },
      {"[global_l2_norm]", "xs[1]", "i64[3]"});
  float dummy[5] = {};
  Tensor remote = Tensor::wrap(dummy, {5}, DType::f32, Device::cuda(0));
  expect_error<DeviceError>(
      [&] {
        kernels::global_l2_norm({ok, remote}, out);
      },
      {"[global_l2_norm]", "xs[1]", "f32[5] on cuda:0", "f32[1] on cpu"});
  expect_error<DeviceError>([&] { kernels::sum(remote, out); },
                            {"[sum]", "f32[5] on cuda:0", "f32[1] on cpu"});
}

}  // namespace
}  // namespace zt
