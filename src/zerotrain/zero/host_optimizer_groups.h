// The host side of optimizer offload ([Note: optimizer offload] in shard_optimizer.h): the host
// groups (host_copies.h: a group's host value and gradient copies), packed into sub-groups
// (sub_groups.h), one CPU optimizer per sub-group, their state in swap files with nvme
// (nvme_state_swap.h), and the worker thread stepping them after step() returns
// (host_step_worker.h). Host groups are numbered in group order. Tested by
// tests/zero/test_shard_optimizer.cpp, tests/zero/test_zero_stage.cpp and
// tests/mpi/test_zero_parity.cpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "zerotrain/optim/flat_optimizer.h"
#include "zerotrain/optim/optimizer_state.h"
#include "zerotrain/zero/host_copies.h"
#include "zerotrain/zero/host_step_worker.h"
#include "zerotrain/zero/offload_policy.h"
#include "zerotrain/zero/optimizer_options.h"
#include "zerotrain/zero/optimizer_placement.h"
#include "zerotrain/zero/param_group.h"
#include "zerotrain/zero/state_swap.h"
#include "zerotrain/zero/sub_groups.h"
#include "zerotrain/zero/zero_context.h"

namespace zt::zero {

class HostOptimizerGroups {
 public:
  // What the host optimizers start from: their parts of `initial` (optimizer_state_parts.h);
  // the first sub-group also takes stray names when `strays`.
  struct Start {
    const optim::OptimizerState& initial;
    const std::set<std::string>& all_params;
    bool strays = false;
  };
  // The groups placed on the host by `placement` (at least one), their values copied to host
  // memory (values_on_host: the groups' own host shards, stepped in place; swapped: one staging
  // buffer), stepped in sub-groups of about policy.sub_group_size elements. The first sub-group's
  // optimizer has the precision guard. Pushes the (loaded) values to the device runs.
  HostOptimizerGroups(const std::vector<ParamGroup*>& groups, const OptimizerPlacement& placement,
                      RunExtent extent, const OptimizerOptions& options,
                      const OffloadPolicy& policy, bool values_on_host, const Start& start,
                      const ZeroContext& ctx, Stream stream);
  ~HostOptimizerGroups();
  HostOptimizerGroups(const HostOptimizerGroups&) = delete;
  HostOptimizerGroups& operator=(const HostOptimizerGroups&) = delete;

  // Host group i's gradient is final once `ready`'s work is done: starts its copy to the host.
  void gradient_ready(size_t i, const Tensor& grad, Stream ready);
  // Every sub-group counts the step (none when one refuses lr or grad_scale).
  void begin_step(float lr, float grad_scale);
  // Copies the gradients not copied yet (grads: per group), then starts the worker.
  void start_update(std::span<const Tensor> grads, Stream stream);
  // Until host group i is stepped; `stream` waits for its values' copy to the device.
  void await_values(size_t i, Stream stream);
  void drain() { worker_.drain(); }
  // The (loaded) values of every host group to their device runs, after `stream`'s work so far.
  void push_all_values(Stream stream);

  void set_betas(double beta1, double beta2);
  void set_step_count(int64_t step);
  int64_t step_count() const { return optimizers_.front()->step_count(); }
  bool state_swapped() const { return swap_ != nullptr; }
  // Runs `use`, which only reads, on every sub-group's optimizer with its state in memory.
  void for_each_sub_group(const std::function<void(optim::FlatOptimizer&)>& use);
  // Calls `use` with host group i's state slots, in memory for the call.
  void with_run_state(
      size_t i,
      const std::function<void(const std::vector<optim::FlatOptimizer::SlotTensor>&)>& use);
  // for_each_piece of shard_optimizer.h, sub-group by sub-group.
  void for_each_piece(bool fill,
                      const std::function<void(optim::FlatOptimizer::PieceTensor&)>& use);

  int64_t state_bytes() const;
  int64_t value_bytes() const;
  int64_t grad_bytes() const;
  int64_t nvme_bytes() const { return swap_ ? swap_->file_bytes() : 0; }

 private:
  void make_host_groups(const OptimizerPlacement& placement, Stream stream);
  void make_optimizers(const OptimizerOptions& options, const Start& start);
  void make_state_swap(const OffloadPolicy& policy);
  // offload_param nvme: the host runs view one buffer of a sub-group's values
  // (lend_swapped_values), read from the swap file before the sub-group's update and written
  // back after.
  void lend_swapped_values();
  void read_swapped_values(size_t s);
  void write_swapped_values(size_t s);
  void update(Stream stream);  // the worker: steps the sub-groups, copies back
  void update_sub_group(size_t s, Stream stream);
  void push_values(size_t i, Stream after);  // host group i's values -> the device run

  std::vector<ParamGroup*> groups_;
  RunExtent extent_;
  bool values_on_host_ = false;
  bool values_swapped_ = false;                   // offload_param nvme
  Tensor swapped_values_;                         // u8: the values of the sub-group being updated
  std::vector<std::unique_ptr<HostGroup>> host_;  // in group order
  HostCopies copies_;  // after host_: destroyed first, waiting for copies into host_'s memory
  std::vector<SubGroup> sub_groups_;
  std::vector<std::unique_ptr<optim::FlatOptimizer>> optimizers_;  // per sub-group
  std::unique_ptr<StateSwap> swap_;  // nvme: the sub-groups' state between steps
  HostStepWorker worker_;            // last: joined first
};

}  // namespace zt::zero
