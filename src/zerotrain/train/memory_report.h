// Memory truth of a training run, per rank: the bytes of parameters, gradients, optimizer state
// (f32 masters included) and activations, once after setup and once at the step where allocated
// memory peaked. See [Note: memory report]. Tested by tests/train/test_memory_report.cpp (one
// process, stages 0-3) and tests/mpi/test_zero_memory.cpp (2 and 4 ranks).
//
// [Note: memory report]
// The allocator of the run's device (cpu_allocator() or the CUDA caching allocator) counts every
// tensor byte; the ZeRO engine (zero::ZeroStage::memory) knows which of them are model states at
// any moment. The report splits the allocator's bytes into:
//   params, grads, optimizer: ZeroStage::memory() at the moment reported. At the peak that moment
//     is the sample with the most bytes allocated among those taken around every block's forward
//     and backward and after the optimizer step; the samples inside the engine's hooks see what is
//     in flight there (stage 2's full gradient buffers before their reduce-scatter, stage 3's
//     gathered blocks), because a `before` sample is taken after the engine's hook and an `after`
//     sample before it.
//   other: bytes allocated between steps that are not model states (the batch on the device, the
//     loss, kernel workspaces, the allocator's rounding), measured at the start of the step.
//   activations: the rest of the peak: what forward and backward held beyond model states and
//     `other` (saved activations, recomputed layers, backward temporaries, logits).
//   host params, host grads, host optimizer, swap files: what offload keeps in host memory and in
//     swap files (ZeroStage::memory()'s host_* and nvme), at the same moment; reported only when
//     not zero, so a run without offload reports what it always did.
// At start activations are 0 and other = allocated - model states. The categories add up to the
// allocator's bytes (allocated at start, peak allocated at the peak) exactly; activations is
// clamped at 0 and `other` takes the difference when model states in flight exceed the rest. On
// a GPU the host bytes are another allocator's (pinned host memory) and stand beside that total;
// on the CPU they are the run allocator's own and part of it (MemoryReport::host_in_total).
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "zerotrain/core/allocator.h"
#include "zerotrain/nn/block_runner.h"
#include "zerotrain/zero/zero_stage.h"

namespace zt::train {

struct MemoryReport {
  int64_t step = 0;  // 0: after setup; else the optimizer step (1-based) of the peak
  int64_t params = 0, grads = 0, optimizer = 0;
  int64_t activations = 0;
  int64_t other = 0;
  int64_t host_params = 0, host_grads = 0, host_optimizer = 0;  // offload's host memory
  int64_t nvme = 0;                                             // offload's swap files
  bool host_in_total = false;  // the host bytes are the run allocator's (a CPU run)
  int64_t model_states() const { return params + grads + optimizer; }
  int64_t host() const { return host_params + host_grads + host_optimizer; }
  // The run allocator's bytes.
  int64_t total() const {
    return model_states() + activations + other + (host_in_total ? host() : 0);
  }
};

// "params 12.0 MiB, grads 24.0 MiB, optimizer 48.0 MiB, activations 3.5 MiB, other 1.0 KiB, total
// 87.5 MiB", then with offload "; host params 6.0 MiB, host grads 24.0 MiB, host optimizer 48.0
// MiB; swap files 1.0 GiB" (each part only when not zero).
std::string format_memory_report(const MemoryReport& r);

// Samples the allocator and the engine around a run's steps; both outlive it.
class MemoryTracker {
 public:
  MemoryTracker(const zero::ZeroStage& engine, const Allocator& allocator);

  // After setup: the start report. Also resets the peak bookkeeping (call it once, before the
  // first step, after the allocator's peak was reset).
  const MemoryReport& start();
  // The engine's hooks with a sample around each, for nn::BlockRunner::set_hooks.
  nn::BlockHooks wrap(nn::BlockHooks inner);
  // Around one optimizer step; `step` is 1-based.
  void begin_step(int64_t step);
  void end_step();

  const MemoryReport& start_report() const { return start_; }
  // The step whose allocations reached the highest peak so far (the start report before any).
  const MemoryReport& peak_report() const { return peak_; }

 private:
  void sample();

  // The report's fields from the engine's bytes at one moment.
  MemoryReport states_of(const zero::MemoryBytes& m) const;
  // Bytes of `m` the run allocator counts (host bytes too on the CPU).
  int64_t in_allocator(const zero::MemoryBytes& m) const;

  const zero::ZeroStage& engine_;
  const Allocator& allocator_;
  bool host_in_allocator_ = false;  // the run is on the CPU
  MemoryReport start_, peak_;
  int64_t step_ = 0;
  size_t peak_before_ = 0;      // the allocator's peak when the step began
  int64_t other_at_begin_ = 0;  // non-model-state bytes when the step began
  size_t max_sample_ = 0;       // most bytes allocated at a sample of this step
  zero::MemoryBytes states_at_max_;
};

}  // namespace zt::train
