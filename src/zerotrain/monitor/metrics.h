// The metrics record of one logged step (StepMetrics: loss, lr, throughput, MFU, memory, optional
// phase times and memory split), that of one evaluation (EvalMetrics: validation loss and
// perplexity), their field order and number format, and the JSONL writer (one line per logged
// step or evaluation) that metrics.jsonl is. The loop measures the numbers (train/step_measures.h).
// Tested by tests/monitor/test_metrics.cpp.
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace zt::monitor {

// Mean milliseconds per step of the logged interval spent in each phase (train/wall_clock.h).
struct WallClockTimes {
  double forward_ms = 0;
  double backward_ms = 0;  // includes the gradient reduction it overlaps
  double comm_ms = 0;      // waiting for the gradient reduction after backward
  double step_ms = 0;      // clipping and the optimizer update
};

// This rank's memory at the step where allocated memory peaked so far (train/memory_report.h), in
// GiB.
struct MemorySplitGib {
  int64_t step = 0;
  double params = 0, grads = 0, optimizer = 0, activations = 0, other = 0;
  // Offload: host memory per category and swap files (all 0 without offload).
  double host_params = 0, host_grads = 0, host_optimizer = 0, nvme = 0;
};

// This process's host memory at the end of the step (core/host_memory_stats.h), in GiB: the
// resident set, its peak so far and malloc's heap (NaN where malloc's statistics are not known).
struct HostMemoryGib {
  double rss = 0, peak_rss = 0;
  double heap_in_use = 0, heap_arena = 0, heap_mmap = 0;
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
  std::optional<HostMemoryGib> host_memory;   // set by the trainer
};

// One evaluation of the held-out data (train/evaluation.h, [Note: evaluation]).
struct EvalMetrics {
  int64_t step = 0;  // optimizer steps done when it ran
  // The mean token loss over the targets that are not -100, and exp(loss).
  double loss = std::numeric_limits<double>::quiet_NaN();
  double perplexity = std::numeric_limits<double>::quiet_NaN();
  int64_t tokens = 0;     // targets counted
  int64_t sequences = 0;  // rows evaluated
  double seconds = 0;     // wall time of the evaluation
};

// The columns of a metrics record in file order: step, loss, lr, grad_norm, loss_scale, skipped,
// tokens_per_s, tokens_per_s_per_gpu, world_size, mfu, mem_gib, peak_mem_gib, reserved_gib, then
// forward_ms, backward_ms, comm_ms, step_ms when `m` has wall-clock times, then peak_step,
// peak_params_gib, peak_grads_gib, peak_optimizer_gib, peak_activations_gib, peak_other_gib when it
// has a memory split, then peak_host_params_gib, peak_host_grads_gib, peak_host_optimizer_gib
// and peak_swap_gib when that split holds offloaded bytes (a run with offload holds them from its
// setup on, so every record of the run has the same columns), then host_rss_gib,
// host_peak_rss_gib, heap_in_use_gib, heap_arena_gib, heap_mmap_gib when it has host memory.
std::vector<std::pair<std::string, double>> metric_fields(const StepMetrics& m);
// A field value as the files write it: "%.9g", "null" for NaN.
std::string format_metric(double value);

// An evaluation's columns in file order, after its step: eval_loss, eval_perplexity, eval_tokens,
// eval_sequences, eval_seconds (the keys of its JSON line).
std::vector<std::pair<std::string, double>> eval_fields(const EvalMetrics& m);

// {"step":12,"loss":2.5,"lr":0.0003,...} (metric_fields, NaN as null) on one line, without the
// newline.
std::string to_json_line(const StepMetrics& m);
// {"type":"eval","step":12,"eval_loss":2.5,"eval_perplexity":12.2,"eval_tokens":512,
// "eval_sequences":8,"eval_seconds":0.3}: the "type" key tells it from a step's record.
std::string to_json_line(const EvalMetrics& m);

// Appends one JSON line per write to a file, flushed each time so a crash loses nothing logged.
class MetricsWriter {
 public:
  // append: keep the lines already there (a resumed run). Throws zt::Error("metrics") when the file
  // cannot be opened.
  explicit MetricsWriter(const std::filesystem::path& path, bool append = false);
  void write(const StepMetrics& m);
  void write(const EvalMetrics& m);
  const std::filesystem::path& path() const { return path_; }

 private:
  void write_line(const std::string& line);

  std::filesystem::path path_;
  std::ofstream out_;
};

}  // namespace zt::monitor
