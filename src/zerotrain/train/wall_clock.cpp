// The trainer's wall-clock breakdown; see wall_clock.h. Tested by
// tests/train/test_train_outputs.cpp.
#include "zerotrain/train/wall_clock.h"

#include "zerotrain/core/error.h"

namespace zt::train {

void WallClockBreakdown::restart() {
  if (!enabled_) return;
  synchronize(stream_);
  mark_ = Clock::now();
}

void WallClockBreakdown::lap(Phase phase) {
  if (!enabled_) return;
  synchronize(stream_);
  const Clock::time_point now = Clock::now();
  seconds_[static_cast<size_t>(phase)] += std::chrono::duration<double>(now - mark_).count();
  mark_ = now;
}

monitor::WallClockTimes WallClockBreakdown::take(int64_t steps) {
  if (steps < 1) throw ValueError("wall_clock", str("steps = ", steps, ": must be >= 1"));
  const double ms = 1000.0 / static_cast<double>(steps);
  monitor::WallClockTimes t;
  t.forward_ms = seconds_[static_cast<size_t>(Phase::forward)] * ms;
  t.backward_ms = seconds_[static_cast<size_t>(Phase::backward)] * ms;
  t.comm_ms = seconds_[static_cast<size_t>(Phase::comm)] * ms;
  t.step_ms = seconds_[static_cast<size_t>(Phase::step)] * ms;
  seconds_ = {};
  return t;
}

}  // namespace zt::train
