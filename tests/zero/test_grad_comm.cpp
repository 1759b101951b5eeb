// Gradient reductions in the communication dtype (zero/grad_comm.h) on one rank: a buffer reduced
// in a narrower dtype comes back rounded through it, one reduced in its own dtype comes back
// unchanged, in place and into a separate shard; bad dtypes and sizes are typed errors. Gradient
// buckets in a given accumulation dtype, and the trainer's accumulation dtype halving the
// gradient bytes. Multi-rank sums: tests/mpi/test_grad_comm.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "nn/nn_test_util.h"
#include "support/token_fixture.h"
#include "zerotrain/comm/self_communicator.h"
#include "zerotrain/core/error.h"
#include "zerotrain/core/half.h"
#include "zerotrain/io/hf_config.h"
#include "zerotrain/train/trainer.h"
#include "zerotrain/zero/grad_buckets.h"
#include "zerotrain/zero/grad_comm.h"

namespace zt {
namespace {

namespace fs = std::filesystem;

// Values with bits below bf16's and f16's precision, so rounding through them shows.
std::vector<float> fine_values(size_t n) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = (1.0f + static_cast<float>(i) / 1024.0f + 1.0f / 4096.0f) * (i % 2 ? -0.01f : 0.02f);
  return v;
}

std::vector<float> rounded(const std::vector<float>& v, DType dtype) {
  std::vector<float> out;
  for (float x : v)
    out.push_back(dtype == DType::bf16 ? bf16::to_float(bf16::from_float(x))
                                       : f16::to_float(f16::from_float(x)));
  return out;
}

TEST(ZeroGradComm, AllReduceRoundsThroughANarrowerCommDtype) {
  comm::SelfCommunicator self(60);
  const std::vector<float> v = fine_values(37);
  for (DType wire : {DType::bf16, DType::f16}) {
    Tensor buf = Tensor::from_floats(v, {37}, DType::f32);
    zero::all_reduce_grads(self, buf, wire, {});
    EXPECT_EQ(buf.dtype(), DType::f32);
    const std::vector<float> expect = rounded(v, wire);
    EXPECT_NE(expect, v) << "the values do not exercise rounding";
    EXPECT_EQ(buf.to_floats(), expect) << dtype_name(wire);
  }
  Tensor same = Tensor::from_floats(v, {37}, DType::f32);
  zero::all_reduce_grads(self, same, DType::f32, {});
  EXPECT_EQ(same.to_floats(), v);
  // A bf16 accumulation buffer reduced in f32 comes back exactly (bf16 -> f32 -> bf16).
  Tensor narrow = Tensor::from_floats(v, {37}, DType::bf16);
  const std::vector<float> before = narrow.to_floats();
  zero::all_reduce_grads(self, narrow, DType::f32, {});
  EXPECT_EQ(narrow.to_floats(), before);
}

TEST(ZeroGradComm, ReduceScatterInPlaceAndIntoAShard) {
  comm::SelfCommunicator self(60);
  const std::vector<float> v = fine_values(16);
  Tensor full = Tensor::from_floats(v, {16}, DType::f32);
  Tensor shard = Tensor::zeros({16}, DType::f32);
  zero::reduce_scatter_grads(self, full, shard, DType::bf16, {});
  EXPECT_EQ(shard.to_floats(), rounded(v, DType::bf16));
  EXPECT_EQ(full.to_floats(), v) << "the source buffer was changed";
  zero::reduce_scatter_grads(self, full, full, DType::f16, {});  // in place
  EXPECT_EQ(full.to_floats(), rounded(v, DType::f16));
}

TEST(ZeroGradComm, BadDtypesAndSizesAreTypedErrors) {
  comm::SelfCommunicator self(60);
  Tensor f = Tensor::zeros({8}, DType::f32);
  EXPECT_THROW(zero::all_reduce_grads(self, f, DType::i32, {}), ValueError);
  Tensor ints = Tensor::zeros({8}, DType::i64);
  EXPECT_THROW(zero::all_reduce_grads(self, ints, DType::f32, {}), ValueError);
  Tensor b = Tensor::zeros({8}, DType::bf16);
  EXPECT_THROW(zero::reduce_scatter_grads(self, f, b, DType::bf16, {}), DTypeError);
  Tensor small = Tensor::zeros({4}, DType::f32);
  EXPECT_THROW(zero::reduce_scatter_grads(self, f, small, DType::bf16, {}), ShapeError);
  try {
    zero::all_reduce_grads(self, f, DType::u8, {});
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("communication dtype must be f32, bf16 or f16, got u8"),
              std::string::npos)
        << e.what();
  }
}

TEST(ZeroGradComm, BucketsTakeAGivenAccumulationDtype) {
  nn::TransformerOptions mo;
  mo.param_dtype = DType::bf16;
  mo.allocate_grads = false;
  nn::Transformer model(test::tiny_config(nn::Family::llama), mo);
  zero::GradBuckets buckets(model.blocks(), 3000, Device::cpu(), DType::bf16);
  for (const zero::GradBucket& b : buckets.buckets()) {
    EXPECT_EQ(b.flat.dtype(), DType::bf16);
    for (const nn::Parameter* p : b.params)
      EXPECT_EQ(p->grad.dtype(), DType::bf16) << p->name;
  }
  EXPECT_THROW(zero::GradBuckets(model.blocks(), 3000, Device::cpu(), DType::i32), ValueError);
}

train::TrainConfig tiny_run(const fs::path& dir) {
  const nn::ModelConfig mc = test::tiny_config(nn::Family::llama);
  io::write_hf_config(mc, dir / "config.json");
  test::write_random_tokens(dir / "tokens.bin", mc.vocab_size, 600, 88172645463325252ull);
  train::TrainConfig c;
  c.paths.model = dir / "config.json";
  c.paths.data = dir / "tokens.bin";
  c.steps = 1;
  c.data.micro_batch = 2;
  c.data.seq_len = 8;
  c.data.grad_accum = 2;
  c.precision.dtype = DType::bf16;
  c.zero.param_persistence_threshold = 0;
  return c;
}

// Stage 0 (flat buckets) and stage 2 (gradient shards of the groups); stages 1 and 3 hold the
// same gradient buffers as one of them.
TEST(ZeroGradComm, Bf16AccumulationHalvesTheGradientBytes) {
  const fs::path dir = fs::temp_directory_path() / "zt_grad_accum_bytes";
  fs::remove_all(dir);
  fs::create_directories(dir);
  train::TrainConfig c = tiny_run(dir);
  const int64_t params = test::tiny_config(nn::Family::llama).num_params();
  for (int stage : {0, 2}) {
    c.zero.stage = stage;
    c.precision.grad_accum_dtype = DType::f32;
    c.paths.out = dir / ("f32_" + std::to_string(stage));
    const train::TrainSummary f32 = train::train(c);
    c.precision.grad_accum_dtype = DType::bf16;
    c.paths.out = dir / ("bf16_" + std::to_string(stage));
    const train::TrainSummary bf16 = train::train(c);
    EXPECT_GT(bf16.grad_bytes, 0) << "stage " << stage;
    EXPECT_EQ(2 * bf16.grad_bytes, f32.grad_bytes) << "stage " << stage;
    if (stage == 0) {
      EXPECT_EQ(bf16.grad_bytes, 2 * params);
    }
    EXPECT_TRUE(std::isfinite(bf16.last_loss)) << "stage " << stage;
  }
  fs::remove_all(dir);
}

TEST(ZeroGradComm, TrainerRefusesDtypesTheKernelsCannotAccumulateIn) {
  const fs::path dir = fs::temp_directory_path() / "zt_grad_accum_bad";
  fs::remove_all(dir);
  fs::create_directories(dir);
  train::TrainConfig c = tiny_run(dir);
  c.paths.out = dir / "out";
  c.precision.dtype = DType::f32;
  c.precision.grad_accum_dtype = DType::bf16;  // backward adds into f32 or the weights' dtype only
  EXPECT_THROW(train::train(c), ValueError);
  c.precision.dtype = DType::bf16;
  c.precision.grad_accum_dtype = DType::f16;
  EXPECT_THROW(train::train(c), ValueError);
  c.precision.grad_accum_dtype = DType::f32;
  c.precision.comm_dtype = DType::i32;
  EXPECT_THROW(train::train(c), ValueError);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace zt
