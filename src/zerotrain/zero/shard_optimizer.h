// The optimizer a ZeRO stage steps: the one flat optimizer (optim/flat_optimizer.h: Adam, Lamb,
// Lion or SGD) with one run per group (this rank's value shard, or a replicated group's whole
// parameters for stage 0), each group's run placed where the offload policy says
// (offload_policy.h): on the training device, stepping the group's values in place, or in host
// memory (ZeRO-Offload), where the CPU optimizer steps a host copy of the values and the results
// are copied back. Lamb's per-parameter norms are summed over the ranks ([Note: Lamb across
// shards] in optim/flat_optimizer.h); Lamb is not offloaded (its host sub-groups would need every
// parameter's norms before any update). Also the full optimizer state for
// checkpoints, gathered from the shards when the groups are sharded over several ranks. Where the
// runs go: optimizer_placement.h; the host side: host_optimizer_groups.h. Tested by
// tests/zero/test_shard_optimizer.cpp, tests/zero/test_zero_stage.cpp and
// tests/mpi/test_zero_parity.cpp.
//
// [Note: optimizer offload]
// With offload_optimizer cpu, the first groups (all of them, or those within `ratio` of the
// elements at stage 3) are "host groups": their masters and moments live in host memory (pinned
// with pin_memory), beside a host copy of the group's value run and a host buffer for its
// gradient. The engine calls gradient_ready(g) as soon as group g's gradient is final (right after
// its reduce-scatter, during backward), which starts the gradient's copy to the host on the
// device-to-host stream, so the transfer overlaps the rest of the backward. step() first launches
// the device groups' update (the GPU works meanwhile), then steps the host groups one sub-group
// (sub_group_size elements of whole groups) at a time: it waits for that sub-group's gradient
// copies, runs the CPU optimizer on it and starts copying its updated values back on the
// host-to-device stream, so the next sub-group's update overlaps this one's copy. The compute
// stream waits for the copies before the next use of the values, so no step reads stale weights.
// The CPU and CUDA Adam, Lion and SGD give the same bits ([Note: flat segments] in
// optim/segment.h), so a run gives bitwise the same losses, weights and state with and without
// offload. On a CPU run the same path runs with host-to-host copies (the parity tests' "host-side
// placement").
#pragma once

#include <functional>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "zerotrain/comm/communicator.h"
#include "zerotrain/core/stream.h"
#include "zerotrain/optim/flat_optimizer.h"
#include "zerotrain/zero/offload_policy.h"
#include "zerotrain/zero/optimizer_options.h"
#include "zerotrain/zero/optimizer_placement.h"
#include "zerotrain/zero/param_group.h"
#include "zerotrain/zero/zero_context.h"

namespace zt::zero {

class HostOptimizerGroups;

class ShardOptimizer {
 public:
  // The flat optimizer over `groups` (materialized, outliving it) on ctx's device, started from
  // `initial` (fresh or a full state, see optim::FlatOptimizer), with host groups as the policy's
  // offload_optimizer says (device none: every group on the device; nvme: their state in swap
  // files, state_swap.h), stepped in sub-groups of about sub_group_size elements.
  // values_on_host: the groups' value shards live in host memory (offload_param, stage 3), so
  // the CPU optimizer steps them in place and nothing is copied back; a device group (offload_param
  // without offload_optimizer, or past `ratio`) is stepped on a device copy of its shard that is
  // copied home after each step. ctx: the device, and on a GPU the copy streams
  // (comm_streams.h) and, for Lamb over sharded groups, the ranks its norms are summed over.
  // Throws ValueError for Lamb with offload_optimizer.
  ShardOptimizer(const std::vector<ParamGroup*>& groups, RunExtent extent,
                 const OptimizerOptions& options, const OffloadPolicy& policy, bool values_on_host,
                 const optim::OptimizerState& initial, const ZeroContext& ctx, Stream stream);
  ~ShardOptimizer();
  ShardOptimizer(const ShardOptimizer&) = delete;
  ShardOptimizer& operator=(const ShardOptimizer&) = delete;

  RunPlace place(size_t g) const { return placement_.place.at(g); }

  // Group g's gradient run (as step() will get it) is final once the work queued on `ready` is
  // done: a host group starts copying it to host memory. Optional: step() copies what was not.
  void gradient_ready(size_t g, const Tensor& grad, Stream ready);
  // One update of every group with grads[g] times grad_scale. The device groups' values are
  // ready for the work queued on `stream` afterwards; the host groups are updated by a worker
  // thread after step() returns, sub-group by sub-group in group order, so the caller must
  // await_values(g) before it uses a host group's values again. Throws as
  // optim::FlatOptimizer::step, before anything is stepped; an error of the host update is thrown
  // by the next call that waits for it.
  void step(std::span<const Tensor> grads, float lr, float grad_scale, Stream stream);
  // Blocks until host group g's update of the last step is done (no-op for a device group) and
  // makes `stream` wait for its copy back to the device: from then on its values may be read.
  void await_values(size_t g, Stream stream);
  // Blocks until the last step's whole host update is done; rethrows its error.
  void drain();
  void set_betas(double beta1, double beta2);
  int64_t step_count() const;

  // The full state in checkpoint naming. Groups of a world of one: views of the state (every
  // rank). Sharded groups: collective over `comm`; in host memory on the ranks that pass `keep`
  // (the others get only the step), one group's padded state tensor gathered at a time.
  // Waits for the host update (drain), as do the calls below.
  optim::OptimizerState full_state(comm::Communicator& comm, bool keep, Stream stream);
  // Calls `use` with every piece's value and state slots (optim::FlatOptimizer::piece_tensors),
  // device groups first, then host sub-group by sub-group: state and values swapped to NVMe are
  // read in for the call and, with `fill` (use writes into the tensors), written back after it.
  void for_each_piece(bool fill,
                      const std::function<void(optim::FlatOptimizer::PieceTensor&)>& use);
  // After for_each_piece filled the pieces from a saved shard: the step, and the host groups'
  // values copied to the device.
  void shard_loaded(int64_t step, Stream stream);

  // Bytes of optimizer state on the device and in host memory; host copies of values (none when
  // the value shards live there themselves) and gradients.
  int64_t device_state_bytes() const;
  int64_t host_state_bytes() const;
  int64_t host_value_bytes() const;
  int64_t host_grad_bytes() const;
  int64_t nvme_bytes() const;  // this rank's swap file

 private:
  void make_device_optimizer(const OptimizerOptions& options, const optim::OptimizerState& initial,
                             const std::set<std::string>& all_params, const ZeroContext& ctx,
                             Stream stream);
  Tensor device_run(size_t g, Stream stream);  // what the device optimizer steps for group g
  std::vector<Tensor> checked_device_grads(std::span<const Tensor> grads) const;
  void copy_mirrors_home(Stream stream);  // device copies of host value shards -> home
  // Gathers one group's state tensor over `comm`; when kept, adds each parameter's part to st.
  void gather_state(comm::Communicator& comm, bool keep, Stream stream, const ParamGroup& g,
                    const optim::FlatOptimizer::SlotTensor& t, optim::OptimizerState& st) const;

  std::vector<ParamGroup*> groups_;
  RunExtent extent_;
  Device device_;
  OptimizerPlacement placement_;  // per group: device or host, and its index there
  std::unique_ptr<optim::FlatOptimizer> device_optimizer_;  // the device groups' runs
  // Device groups whose value shard lives in host memory or a swap file: the run on the device
  // and the shard (undefined when swapped).
  struct DeviceMirror {
    Tensor run, home;
    ParamGroup* group = nullptr;
  };
  std::vector<DeviceMirror> device_mirrors_;
  std::unique_ptr<HostOptimizerGroups> host_;  // null without host groups
};

}  // namespace zt::zero
