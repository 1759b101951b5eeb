// DeepSpeed's wall_clock_breakdown for the trainer: the time of each step spent in forward,
// backward, waiting for the gradient reduction and the optimizer step, as means per step over the
// logged interval. Tested by tests/train/test_train_outputs.cpp.
//
// [Note: wall-clock breakdown]
// GPU work is asynchronous: a host clock read right after a launch measures the launch, not the
// work. So each phase boundary synchronizes the stream before reading the clock, and only when the
// breakdown is on (it costs the overlap of the host with the device, as DeepSpeed's synchronized
// timers do); off, every call is a no-op. Backward includes the reduction it overlaps; comm is the
// remaining wait after backward.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>

#include "zerotrain/core/stream.h"
#include "zerotrain/monitor/metrics.h"

namespace zt::train {

enum class Phase { forward, backward, comm, step };

class WallClockBreakdown {
 public:
  WallClockBreakdown(bool enabled, Stream stream) : enabled_(enabled), stream_(stream) {}

  bool enabled() const { return enabled_; }
  // Synchronizes and starts timing the next phase (time since the last lap is not counted).
  void restart();
  // Synchronizes and adds the time since restart() or the previous lap to `phase`.
  void lap(Phase phase);
  // The mean milliseconds per step over `steps` steps since the last take; resets the sums.
  // Throws ValueError for steps < 1.
  monitor::WallClockTimes take(int64_t steps);

 private:
  using Clock = std::chrono::steady_clock;
  bool enabled_;
  Stream stream_;
  Clock::time_point mark_ = Clock::now();
  std::array<double, 4> seconds_{};
};

}  // namespace zt::train
