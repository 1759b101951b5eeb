// ZeRO stage 3: values sharded too. A block's groups are gathered before its forward and again
// before its backward and released after each use, with a bounded prefetch of the next blocks'
// groups. See [Note: ZeRO stages] in zero_stage.h. Tested by tests/mpi/test_zero_parity.cpp and
// tests/zero/test_zero_stage.cpp.
//
// [Note: stage 3 prefetch]
// The order of uses is static: forward blocks 0..B-1, then backward B-1..0, so position t of a
// micro-step names the block in use. Before position t runs, its groups are gathered (or, if
// prefetched, waited for); then the groups of positions t+1, t+2, ... are gathered ahead, in that
// order, until the next one would take the gathered-ahead elements past prefetch_bucket_size or all
// gathered elements past max_live_parameters. After position t, a group is released unless it is
// persistent, needed by position t+1 (the head's forward and backward are adjacent), or already
// prefetched for a later position. On a GPU with overlap_comm the gathers run on their own
// stream: the full buffer is allocated on the compute stream, an event orders the all-gather
// after that, and the compute stream waits for the all-gather's event right before first use, so
// a release (a stream-ordered free on the compute stream) never frees memory a gather still
// writes. Host backends gather on the compute stream. Either way the bits are the same. A forward
// only pass (evaluation) ends its order after the forward: positions 0..B-1.
#pragma once

#include <optional>
#include <vector>

#include "zerotrain/core/stream.h"
#include "zerotrain/zero/sharded_stage.h"

namespace zt::zero {

class Stage3 final : public ShardedStage {
 public:
  Stage3(std::vector<std::unique_ptr<nn::Block>>& blocks, const ZeroContext& ctx,
         const ZeroOptions& options, const optim::OptimizerState& initial);
  int stage() const override { return 3; }
  void begin_full_parameters() override;
  void end_full_parameters() override;
  void for_each_full_group(const std::function<void(const ParamGroup&)>& visit) override;
  // The uses end after the forward: no prefetch for backward, no group kept for it. Throws
  // ValueError when nested, or when a group is still gathered ahead at the end.
  void begin_forward_only() override;
  void end_forward_only() override;

  // The most value elements gathered at once so far (full buffers), for the prefetch bounds.
  int64_t peak_live_elements() const { return peak_live_; }

 protected:
  void before_use(size_t block, bool backward) override;
  void after_use(size_t block, bool backward) override;
  bool keeps_full_grads() const override { return false; }
  void after_step() override;

 private:
  bool persistent(const ParamGroup& g) const {
    return g.numel() < options_.config.param_persistence_threshold;
  }
  size_t position(size_t block, bool backward) const;
  // One past the last position of the current pass: 2 x blocks, or blocks when forward only.
  size_t uses_end() const { return forward_only_ ? blocks_ : 2 * blocks_; }
  const std::vector<size_t>& groups_at(size_t position) const;
  void fetch(size_t g);  // starts gathering group g
  void await(size_t g);  // the compute stream may use group g's values from now on
  void drop(size_t g);   // releases group g
  void prefetch_after(size_t position);

  ZeroOptions options_;
  size_t blocks_ = 0;
  std::vector<bool> prefetched_;  // per group: gathered ahead of its use, not yet used
  bool forward_only_ = false;     // between begin_forward_only and end_forward_only
  int64_t live_ = 0, peak_live_ = 0;
  // GPU with overlap_comm: ctx_'s gather stream (comm_streams.h), so the next blocks' values
  // arrive while this block computes; null: the gathers run on the compute stream.
  CudaStream* gather_stream_ = nullptr;
  std::vector<CudaEvent> alloc_done_;  // per group: its full buffer is allocated (compute)
  std::vector<CudaEvent> gathered_;    // per group: its all-gather is done (gather stream)
  std::vector<bool> in_flight_;        // per group: compute has not yet waited for gathered_
};

}  // namespace zt::zero
