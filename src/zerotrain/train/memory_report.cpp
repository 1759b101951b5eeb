// Per-rank memory report of a run; see memory_report.h ([Note: memory report]).
// Tested by tests/train/test_memory_report.cpp.
#include "zerotrain/train/memory_report.h"

#include <algorithm>
#include <utility>

#include "zerotrain/core/error.h"

namespace zt::train {

namespace {

std::string bytes_text(int64_t b) {
  return format_bytes(static_cast<size_t>(std::max<int64_t>(b, 0)));
}

// Hook that samples after `inner` (before_*) or before it (after_*).
nn::BlockHook sampled(nn::BlockHook inner, std::function<void()> sample, bool sample_first) {
  return [inner = std::move(inner), sample = std::move(sample), sample_first](size_t block) {
    if (sample_first) sample();
    if (inner) inner(block);
    if (!sample_first) sample();
  };
}

}  // namespace

std::string format_memory_report(const MemoryReport& r) {
  std::string s =
      str("params ", bytes_text(r.params), ", grads ", bytes_text(r.grads), ", optimizer ",
          bytes_text(r.optimizer), ", activations ", bytes_text(r.activations), ", other ",
          bytes_text(r.other), ", total ", bytes_text(r.total()));
  if (r.host() != 0)
    s += str("; host params ", bytes_text(r.host_params), ", host grads ", bytes_text(r.host_grads),
             ", host optimizer ", bytes_text(r.host_optimizer));
  if (r.nvme != 0) s += str("; swap files ", bytes_text(r.nvme));
  return s;
}

MemoryTracker::MemoryTracker(const zero::ZeroStage& engine, const Allocator& allocator)
    : engine_(engine), allocator_(allocator), host_in_allocator_(allocator.device().is_cpu()) {}

MemoryReport MemoryTracker::states_of(const zero::MemoryBytes& m) const {
  MemoryReport r;
  r.params = m.params;
  r.grads = m.grads;
  r.optimizer = m.optimizer;
  r.host_params = m.host_params;
  r.host_grads = m.host_grads;
  r.host_optimizer = m.host_optimizer;
  r.nvme = m.nvme;
  r.host_in_total = host_in_allocator_;
  return r;
}

int64_t MemoryTracker::in_allocator(const zero::MemoryBytes& m) const {
  const MemoryReport r = states_of(m);
  return r.model_states() + (host_in_allocator_ ? r.host() : 0);
}

const MemoryReport& MemoryTracker::start() {
  const zero::MemoryBytes m = engine_.memory();
  const auto allocated = static_cast<int64_t>(allocator_.stats().allocated);
  start_ = states_of(m);
  start_.other = allocated - in_allocator(m);
  peak_ = start_;
  return start_;
}

nn::BlockHooks MemoryTracker::wrap(nn::BlockHooks inner) {
  auto s = [this] { sample(); };
  nn::BlockHooks h;
  h.before_forward = sampled(std::move(inner.before_forward), s, false);
  h.after_forward = sampled(std::move(inner.after_forward), s, true);
  h.before_backward = sampled(std::move(inner.before_backward), s, false);
  h.after_backward = sampled(std::move(inner.after_backward), s, true);
  return h;
}

void MemoryTracker::sample() {
  const size_t allocated = allocator_.stats().allocated;
  if (allocated < max_sample_) return;
  max_sample_ = allocated;
  states_at_max_ = engine_.memory();
}

void MemoryTracker::begin_step(int64_t step) {
  ZT_ASSERT(step > 0, "train", "memory steps are 1-based, got ", step);
  step_ = step;
  const AllocatorStats s = allocator_.stats();
  peak_before_ = s.peak_allocated;
  const zero::MemoryBytes m = engine_.memory();
  other_at_begin_ = static_cast<int64_t>(s.allocated) - in_allocator(m);
  max_sample_ = s.allocated;
  states_at_max_ = m;
}

void MemoryTracker::end_step() {
  sample();
  const size_t peak = allocator_.stats().peak_allocated;
  if (peak_.step != 0 && peak <= peak_before_) return;  // this step did not raise the peak
  MemoryReport r = states_of(states_at_max_);
  r.step = step_;
  const int64_t rest = static_cast<int64_t>(peak) - in_allocator(states_at_max_);
  r.activations = std::max<int64_t>(0, rest - other_at_begin_);
  r.other = rest - r.activations;
  peak_ = r;
}

}  // namespace zt::train
