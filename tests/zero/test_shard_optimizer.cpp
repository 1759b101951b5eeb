// The optimizer of a ZeRO stage with its state offloaded to host memory ([Note: optimizer offload]
// in zero/shard_optimizer.h), in one process: at stages 1-3, in bf16 with f32 masters, a few
// steps with the state on the host (all of it, in one or several sub-groups, the first half at
// stage 3, with stage 3's value shards on the host too, or in NVMe swap files between steps)
// give bitwise the values and full optimizer state of the same steps on the device; the
// host holds what it should and the device no optimizer state; a bad gradient steps nothing. On a
// GPU (the Cuda tests) the host Adam is compared with the CUDA Adam the same way. Multi-rank
// parity with offload: tests/mpi/test_zero_parity.cpp.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "nn/nn_test_util.h"
#include "zerotrain/core/error.h"
#include "zerotrain/nn/block_runner.h"
#include "zerotrain/zero/sharded_stage.h"
#include "zerotrain/zero/zero_stage.h"

namespace zt {
namespace {

namespace fs = std::filesystem;

struct Trained {
  std::vector<std::vector<float>> values;  // per parameter, after the steps
  optim::OptimizerState state;
  zero::MemoryBytes memory;
};

// `steps` optimizer steps of `stage` (2 micro-steps each) on a tiny bf16 llama on `device`.
Trained train_steps(int stage, const zero::OffloadPolicy& offload, Device device, int steps = 3) {
  const nn::ModelConfig mc =
      device.is_cuda() ? test::tiny_cuda_config(nn::Family::llama) : test::tiny_config(nn::Family::llama);
  nn::Transformer model(mc, {.param_dtype = DType::bf16, .grad_dtype = DType::f32, .device = device});
  model.init_random(7);
  zero::ZeroOptions o;
  o.config.stage = stage;
  o.config.param_persistence_threshold = 0;
  o.config.offload = offload;
  o.optimizer.config.weight_decay = 0.1;
  const Stream stream = Stream::default_for(device);
  auto engine = zero::make_zero_stage(o, model.blocks(), zero::ZeroContext::one_process(device, stream));
  nn::BlockRunner runner(model.blocks());
  runner.set_hooks(engine->hooks());
  for (int s = 0; s < steps; ++s) {
    engine->zero_grad();
    for (int m = 0; m < 2; ++m) {
      engine->begin_micro_step(m == 1);
      runner.forward_backward(test::make_step(mc, 2, 8, 11 + 2 * s + m, DType::bf16, device));
    }
    engine->finish_gradient_sync();
    EXPECT_GT(engine->grad_norm(), 0.0);
    engine->step(1e-2f, 1.0f);
  }
  Trained t;
  t.memory = engine->memory();
  engine->begin_full_parameters();
  for (nn::Parameter* p : model.parameters())
    t.values.push_back(p->value.to_floats(stream));
  engine->end_full_parameters();
  t.state = engine->full_optimizer_state();
  return t;
}

void expect_same(const Trained& a, const Trained& b, const std::string& what) {
  ASSERT_EQ(a.values.size(), b.values.size());
  for (size_t i = 0; i < a.values.size(); ++i)
    EXPECT_EQ(a.values[i], b.values[i]) << what << ": parameter " << i;
  ASSERT_EQ(a.state.step, b.state.step) << what;
  ASSERT_EQ(a.state.tensors.size(), b.state.tensors.size()) << what;
  for (const auto& [name, t] : a.state.tensors) {
    ASSERT_TRUE(b.state.tensors.contains(name)) << what << ": " << name;
    EXPECT_EQ(t.to_floats(), b.state.tensors.at(name).to_floats()) << what << ": " << name;
  }
}

zero::OffloadPolicy host_state(int64_t sub_group_size, double ratio = 1.0) {
  zero::OffloadPolicy p;
  p.optimizer.device = zero::OffloadDevice::cpu;
  p.optimizer.pin_memory = true;
  p.optimizer.ratio = ratio;
  p.sub_group_size = sub_group_size;
  return p;
}

void offloaded_equals_on_device(Device device) {
  for (int stage = 1; stage <= 3; ++stage) {
    const Trained ref = train_steps(stage, {}, device);
    EXPECT_EQ(ref.memory.host_optimizer, 0);
    EXPECT_GT(ref.memory.optimizer, 0);
    for (const int64_t sub_group : {int64_t{1}, int64_t{1'000'000'000}}) {
      const Trained off = train_steps(stage, host_state(sub_group), device);
      const std::string what = str("stage ", stage, ", sub_group_size ", sub_group);
      expect_same(ref, off, what);
      EXPECT_EQ(off.memory.optimizer, 0) << what;  // every group's state on the host
      EXPECT_EQ(off.memory.host_optimizer, ref.memory.optimizer) << what;
      EXPECT_GT(off.memory.host_params, 0) << what;
      EXPECT_GT(off.memory.host_grads, 0) << what;
    }
  }
  // Stage 3's partial offload: the first half of the state on the host, the rest on the device.
  const Trained ref = train_steps(3, {}, device);
  const Trained half = train_steps(3, host_state(20'000, 0.5), device);
  expect_same(ref, half, "stage 3, ratio 0.5");
  EXPECT_GT(half.memory.optimizer, 0);
  EXPECT_GT(half.memory.host_optimizer, 0);
  EXPECT_EQ(half.memory.optimizer + half.memory.host_optimizer, ref.memory.optimizer);
  // Stage 3 with the value shards in host memory too: stepped there in place, gathered from there.
  zero::OffloadPolicy both = host_state(20'000);
  both.params.device = zero::OffloadDevice::cpu;
  both.params.pin_memory = true;
  const Trained hosted = train_steps(3, both, device);
  expect_same(ref, hosted, "stage 3, parameters offloaded");
  EXPECT_EQ(hosted.memory.params, 0);  // nothing gathered between steps, no shard on the device
  EXPECT_EQ(hosted.memory.host_params, ref.memory.params);
  EXPECT_EQ(hosted.memory.optimizer, 0);
  // offload_param without offload_optimizer (DeepSpeed allows it), and with half the state on the
  // host: the device groups step a device copy of their host shard (on a CPU run, the shard).
  zero::OffloadPolicy params_only;
  params_only.params.device = zero::OffloadDevice::cpu;
  expect_same(ref, train_steps(3, params_only, device), "stage 3, parameters only");
  zero::OffloadPolicy params_half = host_state(20'000, 0.5);
  params_half.params.device = zero::OffloadDevice::cpu;
  expect_same(ref, train_steps(3, params_half, device), "stage 3, parameters, ratio 0.5");
  // ZeRO-Infinity: the host state in a swap file under nvme_path between steps, two sub-groups
  // in memory at a time; the swap directory is gone with the engine.
  const fs::path nvme = fs::temp_directory_path() / str("zt_nvme_", getpid());
  fs::create_directories(nvme);
  for (int stage = 1; stage <= 3; stage += 2) {
    zero::OffloadPolicy swapped = host_state(1);  // one group per sub-group
    swapped.optimizer.device = zero::OffloadDevice::nvme;
    swapped.optimizer.nvme_path = nvme.string();
    swapped.optimizer.buffer_count = 2;
    const Trained on_disk = train_steps(stage, swapped, device);
    const Trained ref_stage = train_steps(stage, {}, device);
    expect_same(ref_stage, on_disk, str("stage ", stage, ", nvme"));
    EXPECT_GE(on_disk.memory.nvme, ref_stage.memory.optimizer);  // whole pages per tensor
    EXPECT_LT(on_disk.memory.host_optimizer, ref_stage.memory.optimizer);  // the buffers only
    EXPECT_TRUE(fs::is_empty(nvme)) << "the swap directory outlived the engine";
  }
  fs::remove_all(nvme);
}

TEST(ShardOptimizerOffload, HostStateStepsBitwiseAsOnTheDevice) {
  offloaded_equals_on_device(Device::cpu());
}

TEST(ShardOptimizerOffloadCuda, HostAdamStepsBitwiseAsTheCudaAdam) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  offloaded_equals_on_device(Device::cuda(0));
}

// A gradient of the wrong size is refused before anything is stepped; the next step works.
TEST(ShardOptimizerOffload, BadGradientStepsNothing) {
  const nn::ModelConfig mc = test::tiny_config(nn::Family::llama);
  nn::Transformer model(mc, {.param_dtype = DType::bf16});
  model.init_random(3);
  std::vector<std::unique_ptr<zero::ParamGroup>> owned;
  std::vector<zero::ParamGroup*> groups;
  for (auto& b : model.blocks()) {
    std::vector<nn::Parameter*> ps = b->parameters();
    if (ps.empty()) continue;
    owned.push_back(std::make_unique<zero::ParamGroup>(groups.size(), std::move(ps), 1, 0));
    owned.back()->materialize(false, {});
    groups.push_back(owned.back().get());
  }
  const zero::OffloadPolicy p = host_state(10'000, 1.0);
  zero::ShardOptimizer opt(groups, zero::RunExtent::shard, {}, p, false, {},
                           zero::ZeroContext::one_process(Device::cpu(), {}), {});
  for (size_t g = 0; g < groups.size(); ++g)
    EXPECT_EQ(opt.place(g), zero::RunPlace::host);
  std::vector<Tensor> grads;
  for (zero::ParamGroup* g : groups)
    grads.push_back(Tensor::zeros({g->shard_numel()}, DType::f32));
  const std::vector<float> before = groups.back()->value_shard().to_floats();
  grads.back() = Tensor::zeros({groups.back()->shard_numel() + 1}, DType::f32);
  EXPECT_THROW(opt.step(grads, 1e-2f, 1.0f, {}), ValueError);
  EXPECT_EQ(opt.step_count(), 0);
  EXPECT_EQ(groups.back()->value_shard().to_floats(), before);
  const int64_t n = groups.back()->shard_numel();
  grads.back() = Tensor::from_floats(std::vector<float>(static_cast<size_t>(n), 0.5f), {n}, DType::f32);
  opt.step(grads, 1e-2f, 1.0f, {});
  EXPECT_EQ(opt.step_count(), 1);
  opt.drain();  // the host update runs after step() returns
  EXPECT_NE(groups.back()->value_shard().to_floats(), before);  // the values came back
}

}  // namespace
}  // namespace zt
