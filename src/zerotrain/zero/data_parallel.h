// ZeRO stage 0 (DDP): every rank holds the whole model and optimizer; gradients are summed over the
// ranks with a bucketed all-reduce that overlaps the rest of backward. Tested by
// tests/mpi/test_ddp_training.cpp (2 and 4 ranks against one process) and
// tests/zero/test_grad_buckets.cpp.
//
// [Note: data-parallel step]
// - The loss of every micro-batch is its summed per-token losses divided by the global count of
//   unmasked targets of the step (StepContext::num_items_in_batch, [Note: loss normalisation] in
//   nn/head_block.h), so the all-reduced SUM is the gradient of the global batch's loss, as
//   transformers >= 4.46 defines it over the global batch (micro-batch x accumulation x world);
//   nothing here averages. fp16 also multiplies it by the loss scale (StepContext::loss_scale,
//   [Note: fp16 step] in train/fp16_step.h).
// - Non-boundary micro-steps only accumulate locally; on the boundary micro-step each bucket is
//   reduced as soon as its last block's backward is done (GradBuckets::ready_after). On a GPU the
//   collective runs on a dedicated comm stream after an event from the compute stream, and
//   finish_gradient_sync() makes the compute stream wait for it; host backends reduce in place
//   before the hook returns.
// - Parameters start identical: rank 0's values are broadcast at construction (unless every rank
//   built the same ones, DataParallelOptions::broadcast_values), and check_parameters_identical()
//   compares a checksum of every rank's values on demand.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "zerotrain/comm/communicator.h"
#include "zerotrain/config/zero_keys.h"
#include "zerotrain/core/stream.h"
#include "zerotrain/nn/block.h"
#include "zerotrain/zero/grad_buckets.h"

namespace zt::zero {

struct DataParallelOptions {
  // Elements per gradient bucket: zero_optimization.reduce_bucket_size (DeepSpeed's default).
  int64_t bucket_elements = config::zero_keys::kReduceBucketSize.default_value;
  // zero_optimization.overlap_comm: reduce on a separate stream while backward goes on (GPU only;
  // without it each bucket is reduced on the compute stream).
  bool overlap_comm = true;
  // The buckets' dtype, in which gradients accumulate (data_types.grad_accum_dtype); unset: the
  // dtype of the model's gradients (f32 when none is allocated).
  std::optional<DType> grad_dtype;
  // The dtype buckets are all-reduced in (communication_data_type); unset: the buckets' dtype.
  // See [Note: communication dtype] in grad_comm.h.
  std::optional<DType> comm_dtype;
  // Broadcast rank 0's values at construction; off when every rank built the same values itself
  // (a seeded init, [Note: values built in place] in shard_init.h).
  bool broadcast_values = true;
};

class DataParallel {
 public:
  // `comm` reduces buffers on `device` (NCCL for cuda, MPI/self for the host); it and the blocks
  // must outlive this object. reduce_stream: where the all-reduces run with overlap_comm (the
  // engine's side stream, zero/comm_streams.h; it outlives this object); null: on `compute`.
  // Broadcasts rank 0's parameter values (a collective) unless options.broadcast_values is off.
  DataParallel(std::vector<std::unique_ptr<nn::Block>>& blocks, comm::Communicator& comm,
               Device device, Stream compute, DataParallelOptions options = {},
               CudaStream* reduce_stream = nullptr);
  ~DataParallel();
  DataParallel(const DataParallel&) = delete;
  DataParallel& operator=(const DataParallel&) = delete;

  int world_size() const { return comm_.size(); }
  int rank() const { return comm_.rank(); }
  const GradBuckets& buckets() const { return buckets_; }

  // Starts a micro-step; `boundary`: the last of the accumulation, whose gradients are reduced.
  void begin_micro_step(bool boundary);
  // The BlockRunner's after_block_backward hook.
  void after_block_backward(size_t block);
  // After the boundary micro-step's backward: every bucket reduced, the compute stream ordered
  // after the reductions. Throws ValueError when a bucket was not reduced (a missed hook).
  void finish_gradient_sync();
  // Zeroes the gradient buckets on the compute stream.
  void zero_grad();

  // Sum over ranks of one value per rank, added in rank order (the same result on every rank).
  double sum_over_ranks(double value);
  // A 64-bit checksum of this rank's parameter values (FNV-1a over their bytes).
  uint64_t parameter_checksum();
  // Collective: throws ValueError naming the ranks whose parameters differ from rank 0's.
  void check_parameters_identical();

 private:
  enum class BucketState { idle, launched, reduced };
  void broadcast_parameters();
  void reduce_bucket(size_t index);

  std::vector<std::unique_ptr<nn::Block>>& blocks_;
  comm::Communicator& comm_;
  Device device_;
  Stream compute_;
  DataParallelOptions options_;
  GradBuckets buckets_;
  DType comm_dtype_;
  std::vector<BucketState> state_;  // per bucket
  bool boundary_ = false;
  // GPU with overlap_comm only: the stream the all-reduces run on, so that they overlap the rest
  // of backward (not owned: zero/comm_streams.h).
  CudaStream* comm_stream_ = nullptr;
  std::vector<CudaEvent> ready_events_;  // per bucket: its gradients are complete
  std::optional<CudaEvent> comm_done_;
};

}  // namespace zt::zero
