// DeepSpeed's model-state memory estimators, to the digit: estimate_zero2_model_states_mem_needs
// (deepspeed/runtime/zero/stage_1_and_2.py) and estimate_zero3_model_states_mem_needs (stage3.py),
// and the tables their *_all_cold / *_all_live printers show (every offload and zero_init row, per
// CPU and per GPU, GiB with two decimals). The arithmetic follows Python's: products of integers
// stay exact, one rounding per division or float product, int() truncation before printing.
// See [Note: ZeRO-2 formula]. Tested by tests/estimate/test_deepspeed_model_states.cpp against
// every row DeepSpeed's and transformers' documentation publish.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace zt::estimate {

// [Note: ZeRO-2 formula]
// DeepSpeed changed the per-GPU bytes of ZeRO-2 without offload: its documentation (memory.rst,
// tables and "4 * params + 16 * params / total gpus") and releases before the change print
// 4P + 16P/G; the current stage_1_and_2.py computes 2P + 18P/G (16-bit params, then 16-bit and
// 32-bit grads, 32-bit masters and Adam moments sharded). `current` is what an installed DeepSpeed
// of today prints; `documented` reproduces the published tables. Every other row is the same.
// ZeRO-2 with offload follows the code too: max(4 * total GPUs, 16) bytes per parameter on the
// host (memory.rst writes GPUs per node; the two agree on one node).
enum class Zero2Formula { current, documented };

struct DeepSpeedSetup {
  int64_t gpus_per_node = 1;
  int64_t nodes = 1;
  double additional_buffer_factor = 1.5;
  int64_t total_gpus() const { return gpus_per_node * nodes; }
};

// Bytes, as the Python functions return them (int()).
struct ModelStatesBytes {
  int64_t cpu = 0;
  int64_t gpu = 0;
};

// Params may be fractional (the cold printers are called with 2851e6); they must be > 0.
ModelStatesBytes zero2_model_states(double total_params, const DeepSpeedSetup& setup,
                                    bool offload_optimizer,
                                    Zero2Formula formula = Zero2Formula::current);
ModelStatesBytes zero3_model_states(double total_params, double largest_layer_params,
                                    const DeepSpeedSetup& setup, bool offload_optimizer,
                                    bool offload_param, bool zero_init);
// 4 bytes per largest-layer parameter: its 16-bit params gathered plus its 16-bit gradients.
int64_t zero3_largest_layer_memory(double largest_layer_params);

struct DeepSpeedRow {
  bool offload_param = false;  // ZeRO-3 rows only
  bool offload_optimizer = false;
  bool zero_init = false;  // ZeRO-3 rows only
  ModelStatesBytes bytes;
  std::string options;  // "offload_param=cpu , offload_optimizer=cpu , zero_init=1"
};

struct DeepSpeedTable {
  int stage = 3;
  DeepSpeedSetup setup;
  double total_params = 0;
  double largest_layer_params = 0;  // ZeRO-3 only
  std::vector<DeepSpeedRow> rows;   // in the printers' order
};

// The rows of estimate_zero2_model_states_mem_needs_all_cold (offload_optimizer cpu, none) and of
// estimate_zero3_model_states_mem_needs_all_cold (param+optimizer offload, optimizer offload, no
// offload; each with zero_init 1 then 0). Throws ValueError naming a bad count or setup.
DeepSpeedTable zero2_table(double total_params, const DeepSpeedSetup& setup,
                           Zero2Formula formula = Zero2Formula::current);
DeepSpeedTable zero3_table(double total_params, double largest_layer_params,
                           const DeepSpeedSetup& setup);

// One table row as the printers write it: " %7.2fGB | %6.2fGB | options" (GiB).
std::string format_row(const DeepSpeedRow& row);
// The whole printout: the "Estimated memory needed ..." header (HW and SW lines), the column
// header and every row, each line ending in '\n'.
std::string format_table(const DeepSpeedTable& table);

}  // namespace zt::estimate
