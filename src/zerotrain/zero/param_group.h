// One ParamGroup: the parameters of one block laid out back to back in a flat buffer, the unit
// that the sharded ZeRO stages all-gather and reduce-scatter. Tested by
// tests/zero/test_param_group.cpp and tests/mpi/test_zero_parity.cpp.
//
// [Note: param group layout]
// Elements [offset_i, offset_i + numel_i) of the flat buffer are parameter i (in the block's
// parameters() order). The buffer is padded to world x shard_numel, where shard_numel is
// ceil(numel / world) rounded up to a multiple of kNormChunk (see [Note: chunked gradient norm]);
// rank r owns [r x shard_numel, (r + 1) x shard_numel). Padding stays zero in every buffer.
//
// [Note: param group states]
// The values of a group are in one of four states:
//   Sharded   -> only this rank's shard exists (stage 3 after construction);
//   Gathering -> the full buffer is allocated, its all-gather not yet issued (begin_gather);
//   Gathered  -> the all-gather is issued into the full flat buffer and the parameters' `value`
//                point into it (on a GPU, possibly still running on the stream it was issued on);
//   Released  -> the full buffer was dropped after use; `value` is undefined again.
// begin_gather(): Sharded|Released -> Gathering; finish_gather(): Gathering -> Gathered; gather()
// does both on one stream; release(): Gathered -> Released. Anything else throws,
// so a block that runs on released parameters fails loudly instead of reading a stale buffer. A
// replicated group (stages 1 and 2) is Gathered from construction on and never released; its
// shard is a view into the full buffer.
// The full gradient buffer is separate: acquire_grad() creates it (zeroed) and points the
// parameters' `grad` into it; reduce_grad() reduce-scatters it into this rank's gradient shard and,
// unless told to keep it, drops it again.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "zerotrain/comm/communicator.h"
#include "zerotrain/core/tensor.h"
#include "zerotrain/nn/parameter.h"
#include "zerotrain/zero/shard_comms.h"

namespace zt::zero {

enum class ParamState { sharded, gathering, gathered, released };
const char* param_state_name(ParamState s);

// Where offloaded value shards live between uses when they are not kept in memory (a swap file:
// param_swap.h). A shard is named by its group's index in the stage.
class SwappedShards {
 public:
  virtual ~SwappedShards() = default;
  // Shard g in host memory ([shard] value dtype), unchanged until unpin(g, copies), which the
  // caller calls once the copies from it are queued on `copies`.
  virtual Tensor pin(size_t g) = 0;
  virtual void unpin(size_t g, Stream copies) = 0;
  // Copies shard g into `dst` (host, contiguous); replaces it by `src` (any device: the copy off
  // it on `stream` is waited for).
  virtual void load(size_t g, const Tensor& dst) = 0;
  virtual void store(size_t g, const Tensor& src, Stream stream) = 0;
};

// The part of one parameter inside this rank's shard, in flat coordinates.
struct ShardPiece {
  nn::Parameter* param = nullptr;
  int64_t param_offset = 0;    // flat offset of the parameter
  int64_t begin = 0, end = 0;  // [begin, end) flat, inside [shard_offset, shard_offset + shard)
};

class ParamGroup {
 public:
  // Lays out `params` (non-empty, same value dtype, contiguous values).
  // Throws ValueError for no parameters or a world/rank out of range.
  ParamGroup(size_t block, std::vector<nn::Parameter*> params, int world, int rank);

  size_t block() const { return block_; }
  const std::vector<nn::Parameter*>& params() const { return params_; }
  const std::vector<int64_t>& offsets() const { return offsets_; }
  int64_t numel() const { return numel_; }
  int world() const { return world_; }
  int64_t shard_numel() const { return shard_; }
  int64_t padded_numel() const { return shard_ * world_; }
  int64_t shard_offset() const { return shard_ * rank_; }
  DType value_dtype() const { return value_dtype_; }
  std::vector<ShardPiece> shard_pieces() const;

  ParamState state() const { return state_; }
  bool replicated() const { return replicated_; }

  // Moves the parameters' current values into group storage: the full buffer (replicated, state
  // Gathered) or this rank's shard only (state Sharded, values undefined).
  void materialize(bool replicated, Stream stream);
  // Stages 0-2 built from a ShardSource (shard_init.h, [Note: values built in place]): takes the
  // full buffer ([padded_numel], any floating dtype, which becomes the group's value dtype) built
  // without the parameters' values; replicated, state Gathered, the values pointing into it.
  // Throws ValueError for a buffer of another size or a group materialized already.
  void materialize_full(Tensor full);
  // zero.Init (shard_init.h): takes this rank's value shard ([shard_numel], any floating dtype,
  // which becomes the group's value dtype) built without the full values, which stay undefined;
  // state Sharded. Throws ValueError for a shard of another size or a group materialized already.
  void materialize_shard(Tensor shard);
  // offload_param: moves this rank's value shard (of a sharded group) to host memory, page-locked
  // when pin_key names the key that asked for it (host_buffer.h); gathers then copy it into the
  // full buffer on the compute device first. Throws ValueError for a replicated or unmaterialized
  // group.
  void offload_shard(const std::string& pin_key, Stream stream);
  // offload_param nvme: hands this rank's value shard to `home` as shard `key` and keeps no copy;
  // gathers pin it there while they copy it to the compute device. value_shard() is undefined
  // from then on: read_shard / write_shard reach the values. Throws ValueError as offload_shard.
  void swap_out_shard(SwappedShards& home, size_t key, Stream stream);
  bool shard_offloaded() const { return shard_offloaded_; }
  bool shard_swapped() const { return swapped_ != nullptr; }
  void read_shard(const Tensor& dst) const;               // swapped: the values into dst
  void write_shard(const Tensor& src, Stream stream);     // swapped: new values
  // Sharded|Released -> Gathered: all-gathers the shards into a new full buffer.
  void gather(comm::Communicator& comm, Stream stream);
  // The same in two halves, so that the buffer is allocated on the compute stream and the
  // all-gather runs on another (the caller orders the two streams with an event in between).
  void begin_gather(Stream alloc_stream);
  void finish_gather(comm::Communicator& comm, Stream stream);
  // Gathered -> Released (not for a replicated group).
  void release();
  // Replicated groups after the optimizer step: every rank's updated shard to every rank.
  void all_gather_in_place(comm::Communicator& comm, Stream stream);
  // This rank's values: [shard_numel] value dtype (a view into the full buffer when replicated;
  // undefined when swapped out).
  const Tensor& value_shard() const { return value_shard_; }

  // Creates the zeroed full gradient buffer unless it exists and points the parameters' grads in.
  void acquire_grad(DType dtype, Stream stream);
  bool has_full_grad() const { return grad_full_.defined(); }
  void zero_full_grad(Stream stream);
  // Allocates the gradient shard on `stream` unless it exists (before a reduce on another stream).
  void prepare_grad_shard(Stream stream);
  // Reduce-scatters the full gradient into this rank's shard (summed in rank order). keep_full:
  // the shard is a view into the kept full buffer; otherwise the group lets go of the full buffer
  // and the parameters' grads become undefined, and the buffer is returned: a caller reducing on
  // another stream keeps it alive until that stream's work is done. comm_dtype: the dtype the
  // sums are taken in ([Note: communication dtype] in grad_comm.h); unset: the gradient's dtype.
  // shards: the stage's communicators (shard_comms.h); the group's world is shards.shard()'s size
  // and the sums run over every rank of shards.world() ([Note: hybrid sharding]).
  Tensor reduce_grad(const ShardComms& shards, bool keep_full, Stream stream,
                     std::optional<DType> comm_dtype = std::nullopt);
  // [shard_numel] gradient dtype: this rank's summed gradient after reduce_grad.
  const Tensor& grad_shard() const { return grad_shard_; }

  // Bytes this rank holds now: values (full buffer and/or own shard) on the compute device, the
  // offloaded value shard in host memory, gradients.
  int64_t value_bytes() const;
  int64_t host_value_bytes() const;
  int64_t grad_bytes() const;

 private:
  void point_values();
  void hold_replicated(Tensor full);  // full_ = full; replicated, Gathered

  size_t block_;
  std::vector<nn::Parameter*> params_;
  std::vector<int64_t> offsets_;
  int world_, rank_;
  int64_t numel_ = 0, shard_ = 0;
  DType value_dtype_ = DType::f32;
  ParamState state_ = ParamState::sharded;
  bool replicated_ = false;
  bool materialized_ = false;
  bool shard_offloaded_ = false;
  SwappedShards* swapped_ = nullptr;  // with swap_out_shard
  size_t swap_key_ = 0;
  Device device_ = Device::cpu();  // the compute device: full buffers and gradients live there
  Tensor full_;         // [padded] value dtype, while Gathered
  Tensor value_shard_;  // [shard] value dtype
  Tensor grad_full_;    // [padded] gradient dtype, between acquire_grad and a dropping reduce_grad
  Tensor grad_shard_;   // [shard] gradient dtype
};

}  // namespace zt::zero
