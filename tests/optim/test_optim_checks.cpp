// Bad inputs to the optim/ step functions: each throws a typed error naming the bad value, and a
// rejected call leaves the buffers untouched.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "optim/optim_test_util.h"
#include "zerotrain/core/error.h"
#include "zerotrain/optim/optimizers.h"

namespace zt {
namespace {

using test::RunBuffers;

RunBuffers one_run() {
  RunBuffers r(test::stream_values(5, 0, 0, 9), DType::f32, false, DType::bf16);
  r.set_grad(test::stream_values(5, 1, 0, 9));
  return r;
}

template <class Fn>
void expect_error_with(Fn&& fn, const char* needle) {
  try {
    fn();
    ADD_FAILURE() << "no error; expected one mentioning " << needle;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(OptimChecks, RejectsBadHyperParameters) {
  RunBuffers r = one_run();
  const std::vector<float> before = r.master;
  std::vector<optim::AdamSegment> s = {r.adam(0.0f)};
  optim::AdamParams hp;
  hp.lr = -1.0f;
  expect_error_with([&] { optim::adam_step(s, hp, {}); }, "lr = -1");
  hp = {};
  hp.beta2 = 1.0f;
  expect_error_with([&] { optim::adam_step(s, hp, {}); }, "beta2 = 1");
  expect_error_with([&] { optim::adam_step(s, {}, optim::StepArgs{0}); }, "step = 0");
  expect_error_with(
      [&] {
        optim::adam_step(s, {}, optim::StepArgs{1, std::nanf("")});
      },
      "grad_scale");
  optim::SgdParams sp;
  sp.nesterov = true;
  std::vector<optim::SgdSegment> ss = {r.sgd(0.0f, false)};
  expect_error_with([&] { optim::sgd_step(ss, sp, {}); }, "nesterov");
  optim::LambParams lp;
  lp.max_coeff = 0.001f;
  std::vector<optim::LambSegment> ls = {r.adam(0.0f)};
  expect_error_with([&] { optim::lamb_step(ls, lp, {}); }, "max_coeff");
  EXPECT_EQ(r.master, before);
}

TEST(OptimChecks, RejectsBadRuns) {
  RunBuffers r = one_run();
  optim::AdamSegment a = r.adam(0.0f);
  a.master = nullptr;
  expect_error_with([&] { optim::adam_step({&a, 1}, {}, {}); }, "run #0: master is null");
  a = r.adam(0.0f);
  a.exp_avg_sq = nullptr;
  expect_error_with([&] { optim::adam_step({&a, 1}, {}, {}); }, "second state buffer");
  a = r.adam(-0.5f);
  expect_error_with([&] { optim::adam_step({&a, 1}, {}, {}); }, "weight_decay = -0.5");
  a = r.adam(0.0f);
  a.grad_dtype = DType::i32;
  EXPECT_THROW(optim::adam_step({&a, 1}, {}, {}), DTypeError);
  a = r.adam(0.0f);
  a.param_copy = r.copy.data();
  a.param_dtype = DType::f32;
  EXPECT_THROW(optim::adam_step({&a, 1}, {}, {}), DTypeError);
  optim::AdamParams ams;
  ams.amsgrad = true;
  a = r.adam(0.0f);
  expect_error_with(
      [&] {
        optim::adam_step({&a, 1}, ams, {});
      },
      "run #0: max_exp_avg_sq is null with amsgrad");
  a = r.adam(0.0f, true);
  expect_error_with(
      [&] {
        optim::adam_step({&a, 1}, {}, {});
      },
      "max_exp_avg_sq given but amsgrad = false");
  optim::SgdSegment s = r.sgd(0.0f, true);
  expect_error_with(
      [&] {
        optim::sgd_step({&s, 1}, optim::SgdParams{}, {});
      },
      "momentum_buffer given");
  std::vector<optim::LambSegment> ls = {r.adam(0.0f)};
  std::vector<optim::LambNorms> none;
  expect_error_with([&] { optim::lamb_apply(ls, {}, {}, none); }, "0 norms for 1 runs");
  double norms[2] = {};
  expect_error_with([&] { optim::lamb_moments(ls, {}, {}, norms, Device::cpu()); },
                    "lamb_moments: device = cpu");
  expect_error_with([&] { optim::lamb_apply(ls, {}, {}, norms, Device::cpu()); },
                    "lamb_apply: device = cpu");
  expect_error_with([&] { optim::lamb_moments(ls, {}, {}, nullptr, Device::cuda(0)); },
                    "device_norms is null for 1 runs");
}

TEST(OptimChecks, EmptyRunsAreNoOps) {
  optim::AdamSegment empty;  // n = 0, null pointers: nothing to do
  EXPECT_NO_THROW(optim::adam_step({&empty, 1}, {}, {}));
  EXPECT_NO_THROW(optim::adam_step({}, {}, {}));
}

TEST(OptimChecks, CudaRunsNeedTheCudaBackend) {
  if (cuda_available()) GTEST_SKIP() << "a CUDA device is present";
  RunBuffers r = one_run();
  std::vector<optim::AdamSegment> s = {r.adam(0.0f)};
#if ZT_WITH_CUDA
  GTEST_SKIP() << "CUDA build without a device";
#else
  EXPECT_THROW(optim::adam_step(s, {}, {}, Device::cuda(0)), DeviceError);
  EXPECT_THROW(optim::lamb_step(s, {}, {}, Device::cuda(0)), DeviceError);
  double norms[2] = {};
  EXPECT_THROW(optim::lamb_moments(s, {}, {}, norms, Device::cuda(0)), DeviceError);
  EXPECT_THROW(optim::lamb_apply(s, {}, {}, norms, Device::cuda(0)), DeviceError);
  // The hyper-parameters are checked before the backend is looked for.
  optim::LambParams bad;
  bad.max_coeff = -1.0f;
  EXPECT_THROW(optim::lamb_step(s, bad, {}, Device::cuda(0)), ValueError);
#endif
}

}  // namespace
}  // namespace zt
