// Peak per-GPU memory of zerotrain runs: first the measured peaks (committed benchmark results,
// bench/results/*.json: the estimate must land within 10%), then the orderings every stage and
// offload must obey, and bad setups. Covers src/zerotrain/estimate/peak_estimate.h.
#include <gtest/gtest.h>

#include <cmath>

#include "estimate/estimate_fixtures.h"
#include "zerotrain/core/error.h"
#include "zerotrain/estimate/peak_estimate.h"
#include "zerotrain/estimate/units.h"

namespace zt::estimate {
namespace {

struct Measured {
  const char* config;
  int stage;
  int64_t gpus, seq, micro_batch;
  bool ac;
  double peak_gib;     // peak allocated bytes the run reported
  const char* source;  // the committed result
};

// Add rows as runs are measured (stages 0-3, the 8B shape): each one must stay within 10%.
const Measured kMeasured[] = {
    {"llama_1b_untied.json", 0, 1, 4096, 2, false, 34.486828327178955,
     "bench/results/train_1b_h200.json zerotrain"},
    {"llama_1b_untied.json", 0, 1, 4096, 2, true, 27.704601764678955,
     "bench/results/train_1b_h200.json zerotrain_activation_checkpointing"},
    // 4 H200 through the ZeRO engine (bench/results/zero_stages_h200x4.json, rank 0's peak).
    {"llama_1b_untied.json", 0, 4, 4096, 2, false, 34.494389057159424, "zero0_1b"},
    {"llama_1b_untied.json", 1, 4, 4096, 2, false, 22.09345817565918, "zero1_1b"},
    {"llama_1b_untied.json", 2, 4, 4096, 2, false, 18.88838005065918, "zero2_1b"},
    {"llama_1b_untied.json", 3, 4, 4096, 2, false, 17.26923942565918, "zero3_1b"},
    {"llama_1b_untied.json", 3, 4, 4096, 2, true, 10.48701286315918, "zero3_1b_ac"},
    {"llama3_8b.json", 3, 4, 4096, 1, false, 51.53863573074341, "zero3_8b"},
};

RunSetup setup_of(const std::string& config, int stage, int64_t gpus, int64_t seq, int64_t mbs,
                  bool ac) {
  RunSetup s;
  s.model = estimate_config(config);
  s.stage = stage;
  s.gpus = gpus;
  s.seq = seq;
  s.micro_batch = mbs;
  s.activation_checkpointing = ac;
  return s;
}

TEST(PeakEstimate, MeasuredPeaksWithinTenPercent) {
  for (const Measured& m : kMeasured) {
    const PeakEstimate e =
        estimate_peak(setup_of(m.config, m.stage, m.gpus, m.seq, m.micro_batch, m.ac));
    const double est = e.peak_allocated / kGiB;
    EXPECT_LT(std::abs(est - m.peak_gib) / m.peak_gib, 0.10)
        << m.source << ": estimated " << est << " GiB, measured " << m.peak_gib;
  }
}

// With offload (bench/results/offload_h100.json): the seed's GPT-2 XL case, ZeRO-3 with parameters
// and optimizer on the host, micro-batch 16 with activation checkpointing, on one H100 capped at
// 24 GiB: GPU peak 10.36 GiB measured. Host: the 3B shape's ZeRO-2 optimizer offload held
// 60.47 GiB of model state in host memory (host params 6.72 + grads 13.44 + optimizer 40.31,
// the engine's own count), which the estimate must match.
TEST(PeakEstimate, MeasuredOffloadPeaksWithinTenPercent) {
  RunSetup xl = setup_of("gpt2_xl.json", 3, 1, 1024, 16, true);
  xl.offload_optimizer = xl.offload_param = OffloadDevice::cpu;
  const double gpu = estimate_peak(xl).peak_allocated / kGiB;
  EXPECT_LT(std::abs(gpu - 10.36) / 10.36, 0.10) << "GPT-2 XL: estimated " << gpu << " GiB";
  RunSetup three = setup_of("llama_3b_untied.json", 2, 1, 4096, 1, true);
  three.offload_optimizer = OffloadDevice::cpu;
  const double host = estimate_peak(three).host_per_gpu / kGiB;
  const double measured = 6.718208312988281 + 13.436416625976562 + 40.30924987792969;
  EXPECT_LT(std::abs(host - measured) / measured, 0.10) << "3B host: estimated " << host << " GiB";
  // The 3B sweep's GPU peaks (bench/results/offload_h100.json, overlap_3b): with accumulation 8
  // every block's full f32 gradient stays between the micro-steps.
  struct Case {
    int stage;
    bool ac;
    int64_t accum;
    double gib;
  };
  for (const Case& k : {Case{2, false, 8, 42.730}, Case{2, false, 1, 30.707},
                        Case{3, false, 1, 31.441}, Case{2, true, 8, 35.500},
                        Case{3, true, 8, 36.235}}) {
    RunSetup s = setup_of("llama_3b_untied.json", k.stage, 1, 4096, 1, k.ac);
    s.offload_optimizer = OffloadDevice::cpu;
    s.grad_accum = k.accum;
    const double est = estimate_peak(s).peak_allocated / kGiB;
    EXPECT_LT(std::abs(est - k.gib) / k.gib, 0.10)
        << "3B stage " << k.stage << (k.ac ? " +AC" : "") << " accumulation " << k.accum
        << ": estimated " << est << " GiB, measured " << k.gib;
  }
}

TEST(PeakEstimate, StageZeroModelStatesAre18BytesPerParam) {
  const PeakEstimate e = estimate_peak(setup_of("llama_1b_untied.json", 0, 1, 4096, 2, false));
  double states = 0;
  for (const MemoryItem& it : e.items)
    if (it.name.find("activations") == std::string::npos && it.name != "cuBLASLt workspace")
      states += it.bytes;
  EXPECT_DOUBLE_EQ(states, 18.0 * 1498482688);
  EXPECT_DOUBLE_EQ(e.host_per_node, 0);
  EXPECT_GT(e.needed, e.peak_allocated);
}

TEST(PeakEstimate, F32HasNoMasters) {
  RunSetup s = setup_of("gpt2.json", 0, 1, 1024, 1, false);
  s.dtype = DType::f32;
  const PeakEstimate e = estimate_peak(s);
  EXPECT_DOUBLE_EQ(e.items[0].bytes, 4.0 * 124439808);  // values
  EXPECT_DOUBLE_EQ(e.items[2].bytes, 8.0 * 124439808);  // moments only
}

// amsgrad's max_exp_avg_sq: 4 more optimizer bytes per parameter, sharded like the moments.
TEST(PeakEstimate, AmsgradAddsAThirdF32State) {
  for (int stage : {0, 2}) {
    for (DType dtype : {DType::bf16, DType::f32}) {
      RunSetup s = setup_of("gpt2.json", stage, 2, 1024, 1, false);
      s.dtype = dtype;
      const PeakEstimate plain = estimate_peak(s);
      s.optimizer.amsgrad = true;
      const PeakEstimate ams = estimate_peak(s);
      const double elems =
          stage == 0 ? 124439808.0 : plain.items[2].bytes / (dtype == DType::f32 ? 8 : 12);
      EXPECT_DOUBLE_EQ(ams.items[2].bytes - plain.items[2].bytes, 4.0 * elems) << "stage " << stage;
      EXPECT_DOUBLE_EQ(ams.peak_allocated - plain.peak_allocated, 4.0 * elems);
      EXPECT_NE(ams.items[2].name.find("max v"), std::string::npos) << ams.items[2].name;
      EXPECT_NE(describe(s).find("amsgrad"), std::string::npos);
    }
  }
}

// The update rule's state slots (optim/state_slots.h) are its optimizer bytes: Lamb keeps Adam's
// two moments, Lion one, SGD a momentum buffer only with momentum; masters are 4 bytes in each.
TEST(PeakEstimate, OptimizerBytesFollowTheUpdateRule) {
  for (int stage : {0, 2}) {
    RunSetup s = setup_of("gpt2.json", stage, 2, 1024, 1, false);
    const PeakEstimate adam = estimate_peak(s);
    const double elems = adam.items[2].bytes / 12;  // bf16 values: master + two moments
    const auto bytes_with = [&](optim::OptimizerKind kind, double momentum) {
      RunSetup r = s;
      r.optimizer.kind = kind;
      r.optimizer.momentum = momentum;
      const PeakEstimate e = estimate_peak(r);
      EXPECT_DOUBLE_EQ(e.peak_allocated - adam.peak_allocated, e.items[2].bytes - 12 * elems);
      return e.items[2].bytes / elems;
    };
    EXPECT_DOUBLE_EQ(bytes_with(optim::OptimizerKind::lamb, 0), 12) << "stage " << stage;
    EXPECT_DOUBLE_EQ(bytes_with(optim::OptimizerKind::lion, 0), 8) << "stage " << stage;
    EXPECT_DOUBLE_EQ(bytes_with(optim::OptimizerKind::sgd, 0.9), 8) << "stage " << stage;
    EXPECT_DOUBLE_EQ(bytes_with(optim::OptimizerKind::sgd, 0), 4) << "stage " << stage;
    s.optimizer.kind = optim::OptimizerKind::lion;
    EXPECT_NE(estimate_peak(s).items[2].name.find("Lion"), std::string::npos);
    EXPECT_NE(describe(s).find("Lion"), std::string::npos);
    s.precision = optim::Precision::low;
    EXPECT_THROW(estimate_peak(s), ValueError);  // the low-precision mode is Adam's alone
  }
}

// [Note: communication dtype]: bf16 accumulation halves the gradients; a communication dtype
// other than the accumulation dtype adds one buffer of it.
TEST(PeakEstimate, GradientAndCommunicationDtypes) {
  for (int stage : {0, 2}) {
    RunSetup s = setup_of("gpt2.json", stage, 2, 1024, 1, false);
    const PeakEstimate f32 = estimate_peak(s);
    s.grad_dtype = DType::bf16;
    s.comm_dtype = DType::bf16;
    const PeakEstimate bf16 = estimate_peak(s);
    EXPECT_DOUBLE_EQ(bf16.items[1].bytes * 2, f32.items[1].bytes) << "stage " << stage;
    EXPECT_EQ(bf16.items[1].name, "gradients (bf16)");
    EXPECT_LT(bf16.peak_allocated, f32.peak_allocated) << "stage " << stage;
    s.grad_dtype = DType::f32;
    const PeakEstimate cast = estimate_peak(s);
    const double extra = cast.peak_allocated - f32.peak_allocated;
    const double largest = static_cast<double>(f32.params.largest_unit());
    EXPECT_DOUBLE_EQ(extra, 2.0 * (stage == 0 ? 124439808.0 : largest)) << "stage " << stage;
  }
}

// Issue 13: stages 2-3 hold the whole gradients of the block being reduce-scattered and of the one
// computing (zero/sharded_stage.cpp), whatever reduce_bucket_size: Llama-3-8B with the HF "auto"
// bucket (4096^2 = 16.8 M) still holds 2 whole blocks (the embedding and the head, 525 M each).
TEST(PeakEstimate, InFlightGradientsAreWholeBlocks) {
  for (int stage : {2, 3}) {
    RunSetup s = setup_of("llama3_8b.json", stage, 4, 4096, 1, false);
    s.buckets.reduce_bucket_size = 4096.0 * 4096.0;
    const PeakEstimate small = estimate_peak(s);
    s.buckets.reduce_bucket_size = 0;
    const PeakEstimate zero = estimate_peak(s);
    const auto in_flight = [](const PeakEstimate& e) {
      for (const MemoryItem& it : e.items)
        if (it.name == "gradient buckets (f32)") return it.bytes;
      return -1.0;
    };
    const double blocks = static_cast<double>(small.params.largest_unit()) +
                          static_cast<double>(small.params.second_largest_unit());
    EXPECT_DOUBLE_EQ(in_flight(small), 4.0 * blocks) << "stage " << stage;
    EXPECT_DOUBLE_EQ(in_flight(zero), 4.0 * blocks) << "stage " << stage;
    EXPECT_GT(blocks, 2 * 218e6);
  }
}

// [Note: precision modes]: the low-precision mode keeps two bf16 moments and no masters, 4
// optimizer bytes per parameter instead of mixed's 12; it needs bf16 and no amsgrad.
TEST(PeakEstimate, LowPrecisionKeepsFourOptimizerBytesPerParam) {
  for (int stage : {0, 1}) {
    RunSetup s = setup_of("gpt2.json", stage, 2, 1024, 1, false);
    const PeakEstimate mixed = estimate_peak(s);
    s.precision = optim::Precision::low;
    const PeakEstimate low = estimate_peak(s);
    EXPECT_DOUBLE_EQ(low.items[2].bytes * 3, mixed.items[2].bytes) << "stage " << stage;
    EXPECT_EQ(low.items[2].name, "AdamW moments (bf16, no masters)");
    const double elems = stage == 0 ? static_cast<double>(low.params.total) : 0;
    if (stage == 0) {
      EXPECT_DOUBLE_EQ(low.items[2].bytes, 4.0 * elems);
    }
    EXPECT_NE(describe(s).find("low precision"), std::string::npos);
  }
}

TEST(PeakEstimate, EachStageShardsMore) {
  double previous = 0;
  for (int stage = 0; stage <= 3; ++stage) {
    const double peak =
        estimate_peak(setup_of("llama3_8b.json", stage, 8, 4096, 1, false)).peak_allocated;
    if (stage > 0) {
      EXPECT_LT(peak, previous) << "stage " << stage;
    }
    previous = peak;
  }
}

// [Note: offload layout]. Optimizer offload keeps masters and moments (12 bytes per element of
// each shard), a copy of the f32 gradient shard (4) and of the bf16 value shard (2) on the host:
// 18 bytes per parameter of each shard (it was 16 before the engine's layout kept the value copy
// on the host and the gradient buffers on the GPU). Parameter offload moves the value shard to
// the host, where the optimizer offload already keeps its copy: the host holds as much.
TEST(PeakEstimate, OffloadMovesStatesToTheHost) {
  RunSetup s = setup_of("llama3_8b.json", 3, 4, 4096, 1, false);
  s.gpus_per_node = 4;
  const PeakEstimate plain = estimate_peak(s);
  s.offload_optimizer = OffloadDevice::cpu;
  const PeakEstimate opt = estimate_peak(s);
  s.offload_param = OffloadDevice::cpu;
  const PeakEstimate both = estimate_peak(s);
  EXPECT_LT(opt.peak_allocated, plain.peak_allocated);
  EXPECT_LT(both.peak_allocated, opt.peak_allocated);
  EXPECT_DOUBLE_EQ(plain.host_per_node, 0);
  EXPECT_DOUBLE_EQ(both.host_per_node, opt.host_per_node);
  EXPECT_NEAR(opt.host_per_node, 18.0 * 8030261248, 18.0 * 34 * 4);
  // The GPU gives up exactly the optimizer state (12 bytes per shard element), then the value
  // shard (2).
  const double shard = opt.host_per_gpu / 18.0;
  EXPECT_NEAR(plain.peak_allocated - opt.peak_allocated, 12.0 * shard, 1.0);
  EXPECT_NEAR(opt.peak_allocated - both.peak_allocated, 2.0 * shard, 1.0);
  EXPECT_DOUBLE_EQ(opt.disk_per_node, 0);
}

// NVMe: the state moves to swap files (disk bytes), the host keeps the gradient and value copies
// and buffer_count staging buffers of one sub-group (optimizer) or buffer_size (parameters); the
// parameters' swap adds the values of the sub-group the host optimizer steps.
TEST(PeakEstimate, NvmeSwapsStatesAndStagesThroughHostBuffers) {
  RunSetup s = setup_of("llama3_8b.json", 3, 1, 4096, 1, false);
  s.offload_optimizer = OffloadDevice::cpu;
  s.offload_param = OffloadDevice::cpu;
  const PeakEstimate cpu = estimate_peak(s);
  s.offload_optimizer = OffloadDevice::nvme;
  s.offload_buffers.sub_group_size = 1e8;
  const PeakEstimate opt_nvme = estimate_peak(s);
  const double p = static_cast<double>(cpu.params.total);
  EXPECT_DOUBLE_EQ(opt_nvme.peak_allocated, cpu.peak_allocated);  // the GPU holds the same
  EXPECT_DOUBLE_EQ(opt_nvme.disk_per_gpu, 12.0 * p);              // masters + moments
  // Host: f32 gradients (4) and bf16 values (2) per parameter and 4 f32 staging buffers, each of
  // the largest block (the 525M-element embedding, above the 1e8 sub-group).
  const double largest = static_cast<double>(cpu.params.largest_unit());
  ASSERT_GT(largest, 1e8);
  EXPECT_DOUBLE_EQ(opt_nvme.host_per_gpu, 6.0 * p + 4 * largest * 4);
  s.offload_buffers.sub_group_size = 1e10;  // above the shard: a buffer holds the whole shard
  EXPECT_DOUBLE_EQ(estimate_peak(s).host_per_gpu, 6.0 * p + 4 * p * 4);
  s.offload_buffers.sub_group_size = 1e8;
  s.offload_param = OffloadDevice::nvme;
  s.offload_buffers.param_buffer_size = 1e7;  // below the largest block: a buffer holds one
  s.offload_buffers.param_max_in_cpu = 0;      // staging buffers alone
  const PeakEstimate both = estimate_peak(s);
  EXPECT_DOUBLE_EQ(both.disk_per_gpu, 14.0 * p);
  // ... plus 5 parameter buffers of the largest block and the values of one sub-group (the
  // largest block again, above the 1e8 sub-group) that the host optimizer steps.
  EXPECT_DOUBLE_EQ(both.host_per_gpu, 4.0 * p + 4 * largest * 4 + 5 * largest * 2 + largest * 2);
  EXPECT_DOUBLE_EQ(both.peak_allocated, cpu.peak_allocated);
  // max_in_cpu adds cache buffers of the same size: as many as it fills (1.5 buffers: one), at
  // most the shard's buffers beyond the 5 staging ones.
  s.offload_buffers.param_max_in_cpu = 1.5 * largest;
  EXPECT_DOUBLE_EQ(estimate_peak(s).host_per_gpu, both.host_per_gpu + largest * 2);
  s.offload_buffers.param_max_in_cpu = 1e15;
  const double buffers = std::ceil(p / largest);
  EXPECT_DOUBLE_EQ(estimate_peak(s).host_per_gpu,
                   both.host_per_gpu + (buffers - 5) * largest * 2);
  s.offload_buffers.param_max_in_cpu = 0;
  // Without offload_optimizer the device steps a copy of the value shard.
  s.offload_optimizer = OffloadDevice::none;
  EXPECT_DOUBLE_EQ(estimate_peak(s).peak_allocated, cpu.peak_allocated + 12.0 * p + 2.0 * p);
  EXPECT_DOUBLE_EQ(both.disk_per_node, both.disk_per_gpu);
}

TEST(PeakEstimate, BadSetupsNameTheField) {
  auto expect_error = [](RunSetup s, const std::string& field) {
    try {
      estimate_peak(s);
      FAIL() << "accepted a bad " << field;
    } catch (const ValueError& e) {
      EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
    }
  };
  RunSetup s = setup_of("gpt2.json", 4, 1, 1024, 1, false);
  expect_error(s, "stage");
  s.stage = 0;
  s.precision = optim::Precision::low;
  s.dtype = DType::f32;
  expect_error(s, "precision low");
  s.dtype = DType::bf16;
  s.optimizer.amsgrad = true;
  expect_error(s, "amsgrad");
  s.optimizer.amsgrad = false;
  s.precision = optim::Precision::mixed;
  s.stage = 4;
  s.stage = 2;
  s.offload_param = OffloadDevice::cpu;
  s.offload_optimizer = OffloadDevice::cpu;
  expect_error(s, "offload_param");
  s = setup_of("gpt2.json", 0, 1, 1024, 1, false);
  s.offload_optimizer = OffloadDevice::cpu;
  expect_error(s, "offload_optimizer");
  s.stage = 3;
  s.offload_buffers.sub_group_size = -1;  // 0 is DeepSpeed's: one block per sub-group
  expect_error(s, "sub_group_size");
  s = setup_of("gpt2.json", 0, 1, -8, 1, false);
  expect_error(s, "seq");
  s = setup_of("gpt2.json", 0, 1, 1024, 1, false);
  s.grad_dtype = DType::f16;
  expect_error(s, "grad_dtype");
  s.grad_dtype = DType::f32;
  s.comm_dtype = DType::i32;
  expect_error(s, "comm_dtype");
  s = setup_of("gpt2.json", 0, 0, 1024, 1, false);
  expect_error(s, "gpus");
  s = setup_of("gpt2.json", 0, 1, 1024, 1, false);
  s.dtype = DType::f16;
  expect_error(s, "dtype");
}

// Hybrid sharding holds per GPU the model states of plain ZeRO over the shard group: the first
// three items (values, gradients, optimizer state) of 8 GPUs in groups of 2 equal those of 2 GPUs.
TEST(PeakEstimate, HybridShardingCountsShardsOverTheGroup) {
  for (int stage = 1; stage <= 3; ++stage) {
    RunSetup s = setup_of("gpt2.json", stage, 8, 1024, 1, false);
    const PeakEstimate world = estimate_peak(s);
    s.shard_group_size = 2;
    const PeakEstimate hybrid = estimate_peak(s);
    const PeakEstimate two = estimate_peak(setup_of("gpt2.json", stage, 2, 1024, 1, false));
    for (size_t i = 0; i < 3; ++i)
      EXPECT_DOUBLE_EQ(hybrid.items[i].bytes, two.items[i].bytes)
          << "stage " << stage << " " << hybrid.items[i].name;
    EXPECT_GT(hybrid.peak_allocated, world.peak_allocated) << "stage " << stage;
    EXPECT_NE(describe(s).find("sharded in groups of 2"), std::string::npos) << describe(s);
    s.shard_group_size = 8;  // the whole world: plain
    EXPECT_DOUBLE_EQ(estimate_peak(s).peak_allocated, world.peak_allocated);
    s.shard_group_size = 16;  // more than the world (a config for larger nodes): plain
    EXPECT_DOUBLE_EQ(estimate_peak(s).peak_allocated, world.peak_allocated);
    EXPECT_EQ(describe(s).find("sharded in groups"), std::string::npos) << describe(s);
  }
}

TEST(PeakEstimate, BadShardGroupSizesAreRefused) {
  RunSetup s = setup_of("gpt2.json", 3, 8, 1024, 1, false);
  for (int64_t bad : {0, 3, 6}) {
    s.shard_group_size = bad;
    try {
      estimate_peak(s);
      ADD_FAILURE() << bad << " accepted";
    } catch (const ValueError& e) {
      EXPECT_NE(std::string(e.what()).find(str("divisor of gpus 8, got ", bad)), std::string::npos)
          << e.what();
    }
  }
  s.stage = 0;
  s.shard_group_size = 2;
  EXPECT_THROW(estimate_peak(s), ValueError);
}

}  // namespace
}  // namespace zt::estimate
