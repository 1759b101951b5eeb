// cuDNN's fused flash attention (kernels/cuda/cudnn_attention.h) and the choice of path
// (kernels/cuda/attention_select.h): forward and backward against the CPU kernel (B 2, S 128, 200,
// 512, heads 8/2 and 4/4, D 64 and 128, bf16 and f16), the forward against our CUDA forward, the
// backward bitwise equal run to run, each path's lse driving the other path's backward,
// ZT_ATTENTION's modes and the workspace budget, ZT_CUDNN_ENGINE's and ZT_CUDNN_GQA's syntax.
// CUDA builds only; skipped without a GPU, or where cuDNN cannot run at all (no libcudnn.so.9,
// compute capability < 8.0, cuDNN < 9): a plan that fails to build on a supported GPU fails.
#include <gtest/gtest.h>

#if ZT_WITH_CUDA

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "kernels/reference_attention.h"
#include "support/test_util.h"
#include "zerotrain/core/stream.h"
#include "zerotrain/kernels/attention.h"
#include "zerotrain/kernels/cuda/attention.h"
#include "zerotrain/kernels/cuda/attention_select.h"
#include "zerotrain/kernels/cuda/cudnn_attention.h"
#include "zerotrain/kernels/cuda/cudnn_env.h"

namespace zt {
namespace {

using kernels::AttentionOptions;
using kernels::AttentionPass;
namespace kc = kernels::cuda;

// Skips unless CUDA is here and cuDNN can run a plain bf16 case on this GPU.
#define ZT_SKIP_WITHOUT_CUDNN()                                                           \
  do {                                                                                    \
    ZT_SKIP_WITHOUT_CUDA();                                                               \
    const std::string why_not = cudnn_unavailable();                                      \
    if (!why_not.empty()) GTEST_SKIP() << "cuDNN attention cannot run here: " << why_not; \
  } while (0)

std::string cudnn_unavailable() {
  Tensor q = Tensor::zeros({1, 64, 2, 64}, DType::bf16, Device::cuda(0));
  return kc::cudnn_attention_unsupported(q, q, {0.125f, 0, {}});
}

struct Results {
  Tensor out, lse, dq, dk, dv;  // on the host
};

struct DeviceInputs {
  Tensor q, k, v, dout;
};

DeviceInputs to_device(const test::AttentionInputs& p) {
  const Device dev = Device::cuda(0);
  return {p.q.to(dev), p.k.to(dev), p.v.to(dev), p.dout.to(dev)};
}

// The options the front-end would hand the CUDA paths: the default scale, full causal.
AttentionOptions resolved(const test::AttentionInputs& p) {
  return {1.0f / std::sqrt(static_cast<float>(p.shape.D)), 0, {}};
}

enum class Path { cudnn, native };

void forward(Path path, const DeviceInputs& in, Tensor& out, Tensor& lse,
             const AttentionOptions& opt) {
  if (path == Path::cudnn)
    kc::cudnn_attention_forward(in.q, in.k, in.v, out, lse, opt, Stream::default_for(out.device()));
  else
    kc::native_attention_forward(in.q, in.k, in.v, out, lse, opt,
                                 Stream::default_for(out.device()));
}

void backward(Path path, const DeviceInputs& in, const Tensor& out, const Tensor& lse, Tensor& dq,
              Tensor& dk, Tensor& dv, const AttentionOptions& opt) {
  if (path == Path::cudnn)
    kc::cudnn_attention_backward(in.q, in.k, in.v, out, lse, in.dout, dq, dk, dv, opt,
                                 Stream::default_for(out.device()));
  else
    kc::native_attention_backward(in.q, in.k, in.v, out, lse, in.dout, dq, dk, dv, opt,
                                  Stream::default_for(out.device()));
}

Results host(const Tensor& out, const Tensor& lse, const Tensor& dq, const Tensor& dk,
             const Tensor& dv) {
  synchronize(Stream::default_for(out.device()));
  const Device cpu = Device::cpu();
  return {out.to(cpu), lse.to(cpu), dq.to(cpu), dk.to(cpu), dv.to(cpu)};
}

// Forward on `fwd_path`, then backward on `bwd_path` from the forward's out and lse.
Results run(const test::AttentionInputs& p, Path fwd_path, Path bwd_path) {
  const DeviceInputs in = to_device(p);
  const AttentionOptions opt = resolved(p);
  const auto& s = p.shape;
  const DType dt = p.q.dtype();
  const Device dev = Device::cuda(0);
  Tensor out = Tensor::empty(in.q.shape(), dt, dev);
  Tensor lse = Tensor::empty({s.B, s.Hq, s.S}, DType::f32, dev);
  forward(fwd_path, in, out, lse, opt);
  Tensor dq = Tensor::empty(in.q.shape(), dt, dev), dk = Tensor::empty(in.k.shape(), dt, dev),
         dv = Tensor::empty(in.v.shape(), dt, dev);
  backward(bwd_path, in, out, lse, dq, dk, dv, opt);
  return host(out, lse, dq, dk, dv);
}

Results run_cpu(const test::AttentionInputs& p) {
  const auto& s = p.shape;
  const DType dt = p.q.dtype();
  Tensor out = Tensor::empty(p.q.shape(), dt), lse = Tensor::empty({s.B, s.Hq, s.S}, DType::f32);
  kernels::attention_forward(p.q, p.k, p.v, out, lse);
  Tensor dq = Tensor::empty(p.q.shape(), dt), dk = Tensor::empty(p.k.shape(), dt),
         dv = Tensor::empty(p.v.shape(), dt);
  kernels::attention_backward(p.q, p.k, p.v, out, lse, p.dout, dq, dk, dv);
  return {out, lse, dq, dk, dv};
}

double max_abs(const std::vector<double>& x) {
  double m = 0;
  for (double v : x)
    m = std::max(m, std::fabs(v));
  return m;
}

// As tests/kernels/test_attention_cuda.cpp: within 2% of the output's scale (P and dS are rounded
// to 16 bits before their second product), the scale at least 0.1.
void expect_close_scaled(const Tensor& ref, const Tensor& got, const std::string& what) {
  const std::vector<double> r = test::to_doubles(ref);
  const double rel = 2e-2;
  test::expect_close(r, got, {rel * std::max(max_abs(r), 0.1), rel}, what);
}

constexpr test::Tolerance kLseTolerance{2e-4, 1e-4};

void expect_results_close(const Results& ref, const Results& got, const std::string& what,
                          bool forward_too = true) {
  if (forward_too) {
    expect_close_scaled(ref.out, got.out, what + " out");
    test::expect_close(test::to_doubles(ref.lse), got.lse, kLseTolerance, what + " lse");
  }
  expect_close_scaled(ref.dq, got.dq, what + " dq");
  expect_close_scaled(ref.dk, got.dk, what + " dk");
  expect_close_scaled(ref.dv, got.dv, what + " dv");
}

std::string describe_case(DType dt, int64_t B, int64_t S, int64_t Hq, int64_t Hkv, int64_t D) {
  return str(dtype_name(dt), " B=", B, " S=", S, " H=", Hq, "/", Hkv, " D=", D);
}

class CudnnAttention : public ::testing::TestWithParam<DType> {};

TEST_P(CudnnAttention, ForwardAndBackwardMatchCpu) {
  ZT_SKIP_WITHOUT_CUDNN();
  uint64_t seed = 300;
  for (int64_t D : {64, 128})
    for (int64_t S : {128, 200, 512})
      for (auto [Hq, Hkv] : {std::pair<int64_t, int64_t>{8, 2}, {4, 4}}) {
        const auto p = test::attention_inputs(2, S, Hq, Hkv, D, 0, GetParam(), seed += 11);
        expect_results_close(run_cpu(p), run(p, Path::cudnn, Path::cudnn),
                             "cudnn vs cpu " + describe_case(GetParam(), 2, S, Hq, Hkv, D));
      }
}

TEST_P(CudnnAttention, ForwardMatchesNativeForward) {
  ZT_SKIP_WITHOUT_CUDNN();
  uint64_t seed = 700;
  for (int64_t D : {64, 80, 96, 128})
    for (int64_t S : {200, 1024}) {
      const auto p = test::attention_inputs(2, S, 8, 2, D, 0, GetParam(), seed += 13);
      const Results c = run(p, Path::cudnn, Path::native), n = run(p, Path::native, Path::native);
      const std::string what = "cudnn vs native " + describe_case(GetParam(), 2, S, 8, 2, D);
      expect_close_scaled(n.out, c.out, what + " out");
      test::expect_close(test::to_doubles(n.lse), c.lse, kLseTolerance, what + " lse");
    }
}

// The lse is the boundary between the paths: either path's backward from the other path's forward
// matches its backward from its own forward.
TEST_P(CudnnAttention, LseIsInterchangeableBetweenPaths) {
  ZT_SKIP_WITHOUT_CUDNN();
  const auto p = test::attention_inputs(2, 384, 8, 2, 128, 0, GetParam(), 41);
  const std::string what = describe_case(GetParam(), 2, 384, 8, 2, 128);
  expect_results_close(run(p, Path::native, Path::native), run(p, Path::cudnn, Path::native),
                       "native backward from cudnn forward " + what, false);
  expect_results_close(run(p, Path::cudnn, Path::cudnn), run(p, Path::native, Path::cudnn),
                       "cudnn backward from native forward " + what, false);
}

INSTANTIATE_TEST_SUITE_P(Attention, CudnnAttention, ::testing::Values(DType::f16, DType::bf16),
                         [](const ::testing::TestParamInfo<DType>& p) {
                           return std::string(dtype_name(p.param));
                         });

// The same inputs twice give bitwise the same gradients: the ZeRO stage-parity tests rely on it.
// S = 200 takes the padding-mask form of the backward on cuDNN <= 9.15; 2048 with 32 query heads
// is long enough for an atomic dQ accumulation to show its order.
TEST(CudnnAttentionDeterminism, BackwardRunTwiceIsBitwiseEqual) {
  ZT_SKIP_WITHOUT_CUDNN();
  struct Case {
    int64_t B, S, Hq, Hkv, D;
  };
  for (const Case& c : {Case{2, 512, 8, 2, 128}, Case{2, 200, 4, 4, 64}, Case{1, 2048, 32, 8, 128}})
    for (DType dt : {DType::bf16, DType::f16}) {
      const auto p = test::attention_inputs(c.B, c.S, c.Hq, c.Hkv, c.D, 0, dt, 90 + c.S);
      const Results a = run(p, Path::cudnn, Path::cudnn), b = run(p, Path::cudnn, Path::cudnn);
      const std::string what = describe_case(dt, c.B, c.S, c.Hq, c.Hkv, c.D);
      test::expect_bitwise_equal(a.out, b.out, what + " out");
      test::expect_bitwise_equal(a.lse, b.lse, what + " lse");
      test::expect_bitwise_equal(a.dq, b.dq, what + " dq");
      test::expect_bitwise_equal(a.dk, b.dk, what + " dk");
      test::expect_bitwise_equal(a.dv, b.dv, what + " dv");
    }
}

TEST(AttentionMode, ParsesTheThreeModesAndRejectsOthers) {
  EXPECT_EQ(kc::parse_attention_mode(nullptr), kc::AttentionMode::automatic);
  EXPECT_EQ(kc::parse_attention_mode(""), kc::AttentionMode::automatic);
  EXPECT_EQ(kc::parse_attention_mode("auto"), kc::AttentionMode::automatic);
  EXPECT_EQ(kc::parse_attention_mode("cudnn"), kc::AttentionMode::cudnn);
  EXPECT_EQ(kc::parse_attention_mode("native"), kc::AttentionMode::native);
  try {
    kc::parse_attention_mode("flash");
    ADD_FAILURE() << "expected ValueError";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("ZT_ATTENTION='flash'"), std::string::npos) << e.what();
  }
}

TEST(AttentionMode, NativeAlwaysPicksOurKernels) {
  ZT_SKIP_WITHOUT_CUDA();
  Tensor q = Tensor::zeros({1, 64, 4, 64}, DType::bf16, Device::cuda(0));
  Tensor k = Tensor::zeros({1, 64, 2, 64}, DType::bf16, Device::cuda(0));
  EXPECT_EQ(kc::choose_attention_path(kc::AttentionMode::native, q, k, {0.125f, 0, {}},
                                      AttentionPass::forward),
            kc::AttentionPath::native);
}

TEST(AttentionMode, CudnnRunsSupportedCasesAndNamesWhyNot) {
  ZT_SKIP_WITHOUT_CUDNN();
  const Device dev = Device::cuda(0);
  Tensor q = Tensor::zeros({1, 256, 4, 64}, DType::bf16, dev);
  Tensor k = Tensor::zeros({1, 256, 2, 64}, DType::bf16, dev);
  for (AttentionPass pass : {AttentionPass::forward, AttentionPass::backward}) {
    EXPECT_EQ(kc::choose_attention_path(kc::AttentionMode::cudnn, q, k, {0.125f, 0, {}}, pass),
              kc::AttentionPath::cudnn);
    EXPECT_EQ(kc::choose_attention_path(kc::AttentionMode::automatic, q, k, {0.125f, 0, {}}, pass),
              kc::AttentionPath::cudnn);
  }

  // A sliding window: auto runs our kernels, cudnn refuses and says why.
  const AttentionOptions windowed{0.125f, 32, {}};
  EXPECT_EQ(kc::choose_attention_path(kc::AttentionMode::automatic, q, k, windowed,
                                      AttentionPass::forward),
            kc::AttentionPath::native);
  try {
    kc::choose_attention_path(kc::AttentionMode::cudnn, q, k, windowed, AttentionPass::forward);
    ADD_FAILURE() << "expected ValueError";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("sliding window 32"), std::string::npos) << e.what();
  }

  // f32: likewise.
  Tensor q32 = Tensor::zeros({1, 256, 4, 64}, DType::f32, dev);
  Tensor k32 = Tensor::zeros({1, 256, 2, 64}, DType::f32, dev);
  try {
    kc::choose_attention_path(kc::AttentionMode::cudnn, q32, k32, {0.125f, 0, {}},
                              AttentionPass::backward);
    ADD_FAILURE() << "expected ValueError";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("dtype f32"), std::string::npos) << e.what();
  }
}

// [Note: cuDNN workspace budget]: an eighth of the GPU's memory, inclusive.
TEST(AttentionMode, WorkspaceBudgetIsAnEighthOfTheGpu) {
  constexpr int64_t gib = int64_t{1} << 30;
  EXPECT_TRUE(kc::cudnn_workspace_fits(2 * gib, 80 * gib));
  EXPECT_TRUE(kc::cudnn_workspace_fits(10 * gib, 80 * gib));
  EXPECT_FALSE(kc::cudnn_workspace_fits(10 * gib + 1, 80 * gib));
  EXPECT_FALSE(kc::cudnn_workspace_fits(64 * gib, 141 * gib));
}

// Seq 32768 with 32 heads: the deterministic backward's dP workspace (~64 GiB) is over the budget
// of any GPU up to 512 GiB, so auto runs that backward on our kernels and its forward on cuDNN;
// ZT_ATTENTION=cudnn still takes cuDNN.
TEST(AttentionMode, AutoRunsALongSequenceBackwardOnOurKernels) {
  ZT_SKIP_WITHOUT_CUDNN();
  const Device dev = Device::cuda(0);
  Tensor q = Tensor::zeros({1, 32768, 32, 64}, DType::bf16, dev);
  Tensor k = Tensor::zeros({1, 32768, 8, 64}, DType::bf16, dev);
  const AttentionOptions opt{0.125f, 0, {}};
  EXPECT_GT(kc::cudnn_attention_workspace_bytes(q, k, opt, AttentionPass::backward),
            int64_t{60} << 30);
  EXPECT_EQ(kc::choose_attention_path(kc::AttentionMode::automatic, q, k, opt,
                                      AttentionPass::backward),
            kc::AttentionPath::native);
  EXPECT_EQ(kc::choose_attention_path(kc::AttentionMode::automatic, q, k, opt,
                                      AttentionPass::forward),
            kc::AttentionPath::cudnn);
  EXPECT_EQ(kc::choose_attention_path(kc::AttentionMode::cudnn, q, k, opt, AttentionPass::backward),
            kc::AttentionPath::cudnn);
}

// What ZT_ATTENTION in this process's environment selects: run with it unset, =native, =cudnn and
// =flash (a bad value, refused by the first attention call).
TEST(AttentionMode, EnvironmentSelectsThePath) {
  ZT_SKIP_WITHOUT_CUDNN();
  const Device dev = Device::cuda(0);
  Tensor q = Tensor::zeros({1, 256, 4, 64}, DType::bf16, dev);
  Tensor k = Tensor::zeros({1, 256, 2, 64}, DType::bf16, dev);
  const char* env = std::getenv("ZT_ATTENTION");
  kc::AttentionMode expected{};
  try {
    expected = kc::parse_attention_mode(env);
  } catch (const ValueError&) {
    EXPECT_THROW(kc::attention_mode(), ValueError);
    Tensor out = Tensor::zeros(q.shape(), DType::bf16, dev);
    Tensor lse = Tensor::zeros({1, 4, 256}, DType::f32, dev);
    EXPECT_THROW(kernels::attention_forward(q, k, k, out, lse), ValueError);
    return;
  }
  EXPECT_EQ(kc::attention_mode(), expected);
  const std::string name = kernels::attention_backend_name(q, k);
  EXPECT_EQ(name, expected == kc::AttentionMode::native ? "native" : "cudnn")
      << "ZT_ATTENTION=" << (env ? env : "");
  Tensor q32 = Tensor::zeros({1, 256, 4, 64}, DType::f32, dev);
  if (expected == kc::AttentionMode::cudnn)
    EXPECT_THROW(kernels::attention_backend_name(q32, q32), ValueError);
  else
    EXPECT_EQ(kernels::attention_backend_name(q32, q32), "native");
}

TEST(AttentionMode, BackendNameOnTheHostIsCpu) {
  Tensor q = Tensor::zeros({1, 16, 4, 64}, DType::bf16);
  Tensor k = Tensor::zeros({1, 16, 2, 64}, DType::bf16);
  EXPECT_EQ(kernels::attention_backend_name(q, k), "cpu");
}

// ZT_CUDNN_ENGINE's syntax (kernels/cuda/cudnn_env.h); needs no GPU.
TEST(CudnnEnv, ParsesEngineRequestsAndRejectsMalformedOnes) {
  const kc::cudnn_env::EngineRequest every = kc::cudnn_env::parse_engine_request("2");
  EXPECT_TRUE(every.graph.empty());
  EXPECT_EQ(every.engine, 2);
  EXPECT_TRUE(every.knobs.empty());
  const kc::cudnn_env::EngineRequest one =
      kc::cudnn_env::parse_engine_request("attention backward@2:24=26,3=1");
  EXPECT_EQ(one.graph, "attention backward");
  EXPECT_EQ(one.engine, 2);
  const std::vector<std::pair<int64_t, int64_t>> knobs{{24, 26}, {3, 1}};
  EXPECT_EQ(one.knobs, knobs);
  for (const char* bad : {"", "x", "-1", "2 3", "2:", "2:24", "2:24=", "2;24=1", "2:24=1;"})
    EXPECT_THROW(kc::cudnn_env::parse_engine_request(bad), ValueError) << "'" << bad << "'";
}

// ZT_CUDNN_GQA's values; needs no GPU.
TEST(CudnnEnv, GroupSumPlaceIsFusedUnlessExpandIsAsked) {
  EXPECT_FALSE(kc::cudnn_env::group_sum_outside_from(nullptr));
  EXPECT_FALSE(kc::cudnn_env::group_sum_outside_from(""));
  EXPECT_FALSE(kc::cudnn_env::group_sum_outside_from("fused"));
  EXPECT_TRUE(kc::cudnn_env::group_sum_outside_from("expand"));
  for (const char* bad : {"1", "Expand", "expand "})
    EXPECT_THROW(kc::cudnn_env::group_sum_outside_from(bad), ValueError) << "'" << bad << "'";
}

}  // namespace
}  // namespace zt

#endif  // ZT_WITH_CUDA
