// DeepSpeed's model-state estimators against every table its documentation (docs/code-docs/source/
// memory.rst: t5-3b, ZeRO-2 and ZeRO-3, live and cold; the t5-large case1-3 example) and
// transformers' DeepSpeed guide (bigscience/T0_3B on 1 and 2 GPUs) publish: whole printouts,
// compared character for character. Covers src/zerotrain/estimate/deepspeed_model_states.h.
#include <gtest/gtest.h>

#include <string>

#include "zerotrain/core/error.h"
#include "zerotrain/estimate/deepspeed_model_states.h"

namespace zt::estimate {
namespace {

DeepSpeedSetup setup(int64_t gpus_per_node, int64_t nodes = 1) {
  DeepSpeedSetup s;
  s.gpus_per_node = gpus_per_node;
  s.nodes = nodes;
  return s;
}

// transformers docs (deepspeed.md, "Memory requirements"): T0_3B, one GPU.
TEST(DeepSpeedModelStates, T0_3bOneGpuZero3) {
  const std::string expected =
      "Estimated memory needed for params, optim states and gradients for a:\n"
      "HW: Setup with 1 node, 1 GPU per node.\n"
      "SW: Model with 2783M total params, 65M largest layer params.\n"
      "  per CPU  |  per GPU |   Options\n"
      "   70.00GB |   0.25GB | offload_param=cpu , offload_optimizer=cpu , zero_init=1\n"
      "   70.00GB |   0.25GB | offload_param=cpu , offload_optimizer=cpu , zero_init=0\n"
      "   62.23GB |   5.43GB | offload_param=none, offload_optimizer=cpu , zero_init=1\n"
      "   62.23GB |   5.43GB | offload_param=none, offload_optimizer=cpu , zero_init=0\n"
      "    0.37GB |  46.91GB | offload_param=none, offload_optimizer=none, zero_init=1\n"
      "   15.56GB |  46.91GB | offload_param=none, offload_optimizer=none, zero_init=0\n";
  EXPECT_EQ(format_table(zero3_table(2783930000.0, 65800000.0, setup(1))), expected);
}

// transformers docs (older deepspeed guide, "let's repeat the same with 2 GPUs").
TEST(DeepSpeedModelStates, T0_3bTwoGpusZero3) {
  const std::string expected =
      "Estimated memory needed for params, optim states and gradients for a:\n"
      "HW: Setup with 1 node, 2 GPUs per node.\n"
      "SW: Model with 2783M total params, 65M largest layer params.\n"
      "  per CPU  |  per GPU |   Options\n"
      "   70.00GB |   0.25GB | offload_param=cpu , offload_optimizer=cpu , zero_init=1\n"
      "   70.00GB |   0.25GB | offload_param=cpu , offload_optimizer=cpu , zero_init=0\n"
      "   62.23GB |   2.84GB | offload_param=none, offload_optimizer=cpu , zero_init=1\n"
      "   62.23GB |   2.84GB | offload_param=none, offload_optimizer=cpu , zero_init=0\n"
      "    0.74GB |  23.58GB | offload_param=none, offload_optimizer=none, zero_init=1\n"
      "   31.11GB |  23.58GB | offload_param=none, offload_optimizer=none, zero_init=0\n";
  EXPECT_EQ(format_table(zero3_table(2783930000.0, 65800000.0, setup(2))), expected);
}

// t5-3b as AutoModel builds it (T5Model: shared embedding counted once).
constexpr double kT5_3bParams = 2851598336.0;
constexpr double kT5_3bLargest = 32128.0 * 1024.0;

// memory.rst: estimate_zero2_model_states_mem_needs_all_live(t5-3b, 8 GPUs), and _all_cold(2851e6).
TEST(DeepSpeedModelStates, T5_3bZero2LiveAndColdDocumented) {
  const std::string head =
      "Estimated memory needed for params, optim states and gradients for a:\n"
      "HW: Setup with 1 node, 8 GPUs per node.\n"
      "SW: Model with 2851M total params.\n"
      "  per CPU  |  per GPU |   Options\n";
  EXPECT_EQ(format_table(zero2_table(kT5_3bParams, setup(8), Zero2Formula::documented)),
            head +
                "  127.48GB |   5.31GB | offload_optimizer=cpu \n"
                "  127.48GB |  15.93GB | offload_optimizer=none\n");
  EXPECT_EQ(format_table(zero2_table(2851e6, setup(8), Zero2Formula::documented)),
            head +
                "  127.45GB |   5.31GB | offload_optimizer=cpu \n"
                "  127.45GB |  15.93GB | offload_optimizer=none\n");
}

// The current stage_1_and_2.py: 2P + int(18P / G) without offload; the offload row is unchanged.
TEST(DeepSpeedModelStates, Zero2CurrentFormula) {
  const DeepSpeedTable t = zero2_table(2851e6, setup(8), Zero2Formula::current);
  ASSERT_EQ(t.rows.size(), 2u);
  EXPECT_EQ(t.rows[0].bytes.gpu, 5702000000);
  EXPECT_EQ(t.rows[1].bytes.gpu, 5702000000 + 6414750000);
  EXPECT_EQ(format_row(t.rows[1]), "  127.45GB |  11.28GB | offload_optimizer=none");
  // Offloading counts every GPU of the job (max(4 * total_gpus, 16)), not those of a node.
  const ModelStatesBytes two_nodes = zero2_model_states(1e9, setup(8, 2), true);
  EXPECT_EQ(two_nodes.cpu, static_cast<int64_t>(1e9 * 64 * 1.5));
}

// memory.rst: estimate_zero3_model_states_mem_needs_all_live(t5-3b, 8 GPUs).
TEST(DeepSpeedModelStates, T5_3bZero3Live) {
  const std::string expected =
      "Estimated memory needed for params, optim states and gradients for a:\n"
      "HW: Setup with 1 node, 8 GPUs per node.\n"
      "SW: Model with 2851M total params, 32M largest layer params.\n"
      "  per CPU  |  per GPU |   Options\n"
      "   71.71GB |   0.12GB | offload_param=cpu , offload_optimizer=cpu , zero_init=1\n"
      "  127.48GB |   0.12GB | offload_param=cpu , offload_optimizer=cpu , zero_init=0\n"
      "   63.74GB |   0.79GB | offload_param=none, offload_optimizer=cpu , zero_init=1\n"
      "  127.48GB |   0.79GB | offload_param=none, offload_optimizer=cpu , zero_init=0\n"
      "    1.47GB |   6.10GB | offload_param=none, offload_optimizer=none, zero_init=1\n"
      "  127.48GB |   6.10GB | offload_param=none, offload_optimizer=none, zero_init=0\n";
  EXPECT_EQ(format_table(zero3_table(kT5_3bParams, kT5_3bLargest, setup(8))), expected);
}

// memory.rst: estimate_zero3_model_states_mem_needs_all_cold(2851e6, 32e6, 8 GPUs).
TEST(DeepSpeedModelStates, T5_3bZero3Cold) {
  const std::string expected =
      "Estimated memory needed for params, optim states and gradients for a:\n"
      "HW: Setup with 1 node, 8 GPUs per node.\n"
      "SW: Model with 2851M total params, 32M largest layer params.\n"
      "  per CPU  |  per GPU |   Options\n"
      "   71.69GB |   0.12GB | offload_param=cpu , offload_optimizer=cpu , zero_init=1\n"
      "  127.45GB |   0.12GB | offload_param=cpu , offload_optimizer=cpu , zero_init=0\n"
      "   63.72GB |   0.78GB | offload_param=none, offload_optimizer=cpu , zero_init=1\n"
      "  127.45GB |   0.78GB | offload_param=none, offload_optimizer=cpu , zero_init=0\n"
      "    1.43GB |   6.09GB | offload_param=none, offload_optimizer=none, zero_init=1\n"
      "  127.45GB |   6.09GB | offload_param=none, offload_optimizer=none, zero_init=0\n";
  EXPECT_EQ(format_table(zero3_table(2851e6, 32e6, setup(8))), expected);
}

// memory.rst "Discussion": t5-large (737.67M params, 32.90M largest layer) on 4 GPUs, in MiB
// (bytes >> 20): largest layer memory 125, case1 (no offload) 3291, case2 (param and optimizer
// offload) 125, case3 (optimizer offload) 477.
TEST(DeepSpeedModelStates, T5LargeDiscussionCases) {
  const double p = 737668096.0, l = 32128.0 * 1024.0;
  const DeepSpeedSetup s = setup(4);
  EXPECT_EQ(zero3_largest_layer_memory(l) >> 20, 125);
  EXPECT_EQ(zero3_model_states(p, l, s, false, false, true).gpu >> 20, 3291);
  EXPECT_EQ(zero3_model_states(p, l, s, true, true, true).gpu >> 20, 125);
  EXPECT_EQ(zero3_model_states(p, l, s, true, false, true).gpu >> 20, 477);
}

TEST(DeepSpeedModelStates, MultiNodeUsesGpusFactor) {
  // 2 nodes x 8 GPUs: host bytes per node halve (gpus_factor = 1 / nodes), GPU bytes shard by 16.
  const ModelStatesBytes one =
      zero3_model_states(2783930000.0, 65800000.0, setup(8), true, true, true);
  const ModelStatesBytes two =
      zero3_model_states(2783930000.0, 65800000.0, setup(8, 2), true, true, true);
  EXPECT_EQ(two.cpu, one.cpu / 2);
  EXPECT_EQ(two.gpu, one.gpu);
  const DeepSpeedTable t = zero3_table(2783930000.0, 65800000.0, setup(8, 2));
  EXPECT_NE(format_table(t).find("HW: Setup with 2 nodes, 8 GPUs per node."), std::string::npos);
}

TEST(DeepSpeedModelStates, BadInputsNameTheValue) {
  try {
    zero3_table(-5, 1e6, setup(1));
    FAIL() << "negative params accepted";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("total_params"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("-5"), std::string::npos) << e.what();
  }
  EXPECT_THROW(zero2_table(1e9, setup(0)), ValueError);
  EXPECT_THROW(zero3_table(1e9, 0, setup(1)), ValueError);
  EXPECT_THROW(zero3_model_states(1e9, 1e6, setup(1), false, true, true), ValueError);
}

// Counts no model has are refused instead of printing negative or wrapped gigabytes.
TEST(DeepSpeedModelStates, AbsurdCountsAreRefused) {
  const auto refused = [](auto f, const std::string& part) {
    try {
      f();
      ADD_FAILURE() << "accepted: " << part;
    } catch (const ValueError& e) {
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
  };
  refused([] { zero2_table(1e30, setup(1)); },
          "total_params: 1e+30 parameters is above the ceiling");
  refused([] { zero3_table(1e30, 1e6, setup(1)); }, "total_params: 1e+30");
  refused([] { zero3_table(1e9, 2e9, setup(1)); },
          "largest_layer_params: 2e+09 parameters is more than the whole model's 1e+09");
  EXPECT_NO_THROW(zero3_table(1e9, 1e9, setup(1)));
}

}  // namespace
}  // namespace zt::estimate
