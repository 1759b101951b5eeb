// What the training loop measures each step: the FLOPs per token and MFU counted as
// ../shared/DEVICE.md and the FSDP2 peer count them, tokens/s, the allocator's memory, the
// process's host memory (resident set and malloc's heap) and a step timer. The numbers go into
// monitor::StepMetrics (monitor/metrics.h). Tested by tests/train/test_step_measures.cpp.
//
// [Note: MFU convention]
// FLOPs per trained token = 6 * N + 12 * layers * heads * head_dim * seq, where N counts the
// parameters without the embeddings (the untied lm_head counts) — the torchtitan convention the
// peer uses — over the dense bf16 peak of the GPU (989 TFLOP/s on H100 SXM and H200). The CPU has
// no known peak: MFU is NaN there (written "-" in text and null in JSON) unless one is given.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "zerotrain/core/device.h"
#include "zerotrain/monitor/metrics.h"

namespace zt::train {

// The shape numbers behind the FLOP count of [Note: MFU convention].
struct FlopsModel {
  int64_t non_embedding_params = 0;  // nn::ModelConfig::num_non_embedding_params()
  int64_t num_layers = 0;
  int64_t num_heads = 0;
  int64_t head_dim = 0;
  int64_t seq_len = 0;
};

// Training (forward + backward) FLOPs per token. Throws ValueError naming a negative field.
double flops_per_token(const FlopsModel& m);

// Dense bf16 peak FLOP/s of a GPU from its CUDA name ("NVIDIA H100 80GB HBM3", "NVIDIA H200"); 0
// when the name is not known.
double peak_bf16_flops(std::string_view device_name);
// The peak of `device`: peak_bf16_flops of its name for a GPU, 0 for the CPU.
double peak_flops_of(Device device);

// tokens / seconds; 0 when no time has passed.
double tokens_per_second(int64_t tokens, double seconds);
// Model FLOPs utilization: tokens_per_s * flops_per_token / peak_flops; NaN when peak_flops <= 0.
double mfu(double tokens_per_s, double flops_per_token, double peak_flops);
// "0.382", or "-" for NaN.
std::string format_mfu(double mfu);

// The allocator of `device` in GiB (default_allocator(device).stats()).
struct MemorySnapshot {
  double allocated_gib = 0;       // in use now
  double peak_allocated_gib = 0;  // high-water mark since the last reset_peak_memory
  double reserved_gib = 0;        // obtained from the device (in use + cached)
};
MemorySnapshot memory_snapshot(Device device);
void reset_peak_memory(Device device);

// This process's host memory now (core/host_memory_stats.h) in GiB, heap fields NaN where malloc's
// statistics are not known.
monitor::HostMemoryGib host_memory_snapshot();

// Wall-clock seconds between laps (the caller synchronizes the device before reading it).
class StepTimer {
 public:
  StepTimer() : last_(std::chrono::steady_clock::now()) {}
  // Seconds since construction or the previous lap; restarts the count.
  double lap();
  // Leaves `seconds` just spent on something else (an evaluation) out of the current lap.
  void exclude(double seconds);

 private:
  std::chrono::steady_clock::time_point last_;
};

}  // namespace zt::train
