// Training metrics: tokens/s, MFU counted as ../shared/DEVICE.md and the FSDP2 peer count it,
// allocator memory, a step timer, and the JSONL writer (one line per logged step).
// Tested by tests/monitor/test_metrics.cpp.
//
// [Note: MFU convention]
// FLOPs per trained token = 6 * N + 12 * layers * heads * head_dim * seq, where N counts the
// parameters without the embeddings (the untied lm_head counts) — the torchtitan convention the
// peer uses — over the dense bf16 peak of the GPU (989 TFLOP/s on H100 SXM and H200). The CPU has
// no known peak: MFU is NaN there (written "-" in text and null in JSON) unless one is given.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "zerotrain/core/device.h"

namespace zt::monitor {

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

// Mean milliseconds per step of the logged interval spent in each phase (wall_clock.h).
struct WallClockTimes {
  double forward_ms = 0;
  double backward_ms = 0;  // includes the gradient reduction it overlaps
  double comm_ms = 0;      // waiting for the gradient reduction after backward
  double step_ms = 0;      // clipping and the optimizer update
};

// This rank's memory at the step where allocated memory peaked so far (memory_report.h), in GiB.
struct MemorySplitGib {
  int64_t step = 0;
  double params = 0, grads = 0, optimizer = 0, activations = 0, other = 0;
};

// One logged step. NaN marks a value that is not known (written as null).
struct StepMetrics {
  int64_t step = 0;
  double loss = std::numeric_limits<double>::quiet_NaN();
  double lr = 0;
  double grad_norm = std::numeric_limits<double>::quiet_NaN();
  double loss_scale = 1.0;    // the loss scale the step's backward used (fp16; 1 otherwise)
  bool loss_scaling = false;  // fp16: loss_scale is live (csv_monitor writes it, as DeepSpeed)
  int64_t skipped = 0;        // steps of the logged interval whose update an overflow skipped
  double tokens_per_s = 0;    // all ranks together
  double tokens_per_s_per_gpu = 0;
  int64_t world_size = 1;
  double mfu = std::numeric_limits<double>::quiet_NaN();
  double mem_gib = 0;       // allocated at the end of the step
  double peak_mem_gib = 0;  // peak allocated during the logged interval
  double reserved_gib = 0;
  std::optional<WallClockTimes> wall_clock;   // only with wall_clock_breakdown
  std::optional<MemorySplitGib> memory_peak;  // set by the trainer
};

// The columns of a metrics record in file order: step, loss, lr, grad_norm, loss_scale, skipped,
// tokens_per_s, tokens_per_s_per_gpu, world_size, mfu, mem_gib, peak_mem_gib, reserved_gib, then
// forward_ms, backward_ms, comm_ms, step_ms when `m` has wall-clock times, then peak_step,
// peak_params_gib, peak_grads_gib, peak_optimizer_gib, peak_activations_gib, peak_other_gib when it
// has a memory split.
std::vector<std::pair<std::string, double>> metric_fields(const StepMetrics& m);
// A field value as the files write it: "%.9g", "null" for NaN.
std::string format_metric(double value);

// {"step":12,"loss":2.5,"lr":0.0003,...} (metric_fields, NaN as null) on one line, without the
// newline.
std::string to_json_line(const StepMetrics& m);

// Appends one JSON line per write to a file, flushed each time so a crash loses nothing logged.
class MetricsWriter {
 public:
  // append: keep the lines already there (a resumed run). Throws zt::Error("metrics") when the file
  // cannot be opened.
  explicit MetricsWriter(const std::filesystem::path& path, bool append = false);
  void write(const StepMetrics& m);
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
  std::ofstream out_;
};

// Wall-clock seconds between laps (the caller synchronizes the device before reading it).
class StepTimer {
 public:
  StepTimer() : last_(std::chrono::steady_clock::now()) {}
  // Seconds since construction or the previous lap; restarts the count.
  double lap();

 private:
  std::chrono::steady_clock::time_point last_;
};

}  // namespace zt::monitor
