// Flat layout, states and collectives of one ParamGroup; see [Note: param group layout] and
// [Note: param group states] in param_group.h.
#include "zerotrain/zero/param_group.h"

#include <algorithm>

#include "zerotrain/core/error.h"
#include "zerotrain/zero/host_buffer.h"
#include "zerotrain/zero/grad_comm.h"
#include "zerotrain/zero/grad_norm.h"

namespace zt::zero {

namespace {

constexpr std::string_view kComponent = "zero";

bool single(const comm::Communicator& comm) {
  return comm.size() == 1;
}

}  // namespace

const char* param_state_name(ParamState s) {
  switch (s) {
    case ParamState::sharded:
      return "Sharded";
    case ParamState::gathering:
      return "Gathering";
    case ParamState::gathered:
      return "Gathered";
    case ParamState::released:
      return "Released";
  }
  return "?";
}

ParamGroup::ParamGroup(size_t block, std::vector<nn::Parameter*> params, int world, int rank)
    : block_(block), params_(std::move(params)), world_(world), rank_(rank) {
  if (params_.empty()) throw ValueError(kComponent, str("block ", block, " has no parameters"));
  if (world < 1 || rank < 0 || rank >= world)
    throw ValueError(kComponent, str("rank ", rank, " of world ", world, " is out of range"));
  value_dtype_ = params_.front()->value.defined() ? params_.front()->value.dtype() : DType::f32;
  for (nn::Parameter* p : params_) {
    if (p->value.defined() && p->value.dtype() != value_dtype_)
      throw DTypeError(kComponent,
                       str(p->name, " is ", dtype_name(p->value.dtype()), ", the rest of block ",
                           block, " is ", dtype_name(value_dtype_)));
    offsets_.push_back(numel_);
    numel_ += numel_of(p->shape);
  }
  const int64_t per_rank = (numel_ + world - 1) / world;
  shard_ = norm_chunks(per_rank) * kNormChunk;
}

std::vector<ShardPiece> ParamGroup::shard_pieces() const {
  std::vector<ShardPiece> out;
  const int64_t lo = shard_offset(), hi = lo + shard_;
  for (size_t i = 0; i < params_.size(); ++i) {
    const int64_t b = std::max(lo, offsets_[i]);
    const int64_t e = std::min(hi, offsets_[i] + numel_of(params_[i]->shape));
    if (b < e) out.push_back({params_[i], offsets_[i], b, e});
  }
  return out;
}

void ParamGroup::point_values() {
  for (size_t i = 0; i < params_.size(); ++i) {
    nn::Parameter& p = *params_[i];
    p.value = full_.slice(0, offsets_[i], offsets_[i] + numel_of(p.shape)).view(p.shape);
  }
}

void ParamGroup::hold_replicated(Tensor full) {
  full_ = std::move(full);
  materialized_ = true;
  replicated_ = true;
  value_shard_ = full_.slice(0, shard_offset(), shard_offset() + shard_);
  point_values();
  state_ = ParamState::gathered;
}

void ParamGroup::materialize(bool replicated, Stream stream) {
  ZT_ASSERT(!materialized_, kComponent, "group of block ", block_, " materialized twice");
  device_ = params_.front()->value.device();
  Tensor full = Tensor::zeros({padded_numel()}, value_dtype_, device_, stream);
  for (size_t i = 0; i < params_.size(); ++i) {
    nn::Parameter& p = *params_[i];
    if (!p.value.defined() || !p.value.is_contiguous())
      throw ValueError(kComponent, str(p.name, ": value must be defined and contiguous"));
    full.slice(0, offsets_[i], offsets_[i] + numel_of(p.shape))
        .copy_from(p.value.flatten(), stream);
  }
  if (replicated) {
    hold_replicated(std::move(full));
    return;
  }
  materialized_ = true;
  replicated_ = false;
  value_shard_ = full.slice(0, shard_offset(), shard_offset() + shard_).clone(stream);
  for (nn::Parameter* p : params_)
    p->value = Tensor();
  state_ = ParamState::sharded;
}

void ParamGroup::materialize_full(Tensor full) {
  if (materialized_)
    throw ValueError(kComponent, str("group of block ", block_, " materialized twice"));
  if (!full.defined() || full.dim() != 1 || full.numel() != padded_numel() ||
      !is_floating(full.dtype()))
    throw ValueError(kComponent, str("block ", block_, ": a full value buffer must be [",
                                     padded_numel(), "] floating, got ", full.describe()));
  value_dtype_ = full.dtype();
  device_ = full.device();
  hold_replicated(std::move(full));
}

void ParamGroup::materialize_shard(Tensor shard) {
  if (materialized_)
    throw ValueError(kComponent, str("group of block ", block_, " materialized twice"));
  if (!shard.defined() || shard.dim() != 1 || shard.numel() != shard_ ||
      !is_floating(shard.dtype()))
    throw ValueError(kComponent, str("block ", block_, ": a value shard must be [", shard_,
                                     "] floating, got ", shard.describe()));
  value_dtype_ = shard.dtype();
  device_ = shard.device();
  value_shard_ = std::move(shard);
  materialized_ = true;
  replicated_ = false;
  state_ = ParamState::sharded;
}

void ParamGroup::gather(comm::Communicator& comm, Stream stream) {
  begin_gather(stream);
  finish_gather(comm, stream);
}

void ParamGroup::begin_gather(Stream alloc_stream) {
  if (!materialized_)
    throw ValueError(kComponent, str("block ", block_, ": gather before materialize"));
  if (state_ != ParamState::sharded && state_ != ParamState::released)
    throw ValueError(kComponent, str("block ", block_, ": gather from state ",
                                     param_state_name(state_), " (needs Sharded or Released)"));
  full_ = Tensor::empty({padded_numel()}, value_dtype_, device_, alloc_stream);
  state_ = ParamState::gathering;
}

void ParamGroup::finish_gather(comm::Communicator& comm, Stream stream) {
  if (state_ != ParamState::gathering)
    throw ValueError(kComponent, str("block ", block_, ": finish_gather from state ",
                                     param_state_name(state_), " (needs Gathering)"));
  if (shard_offloaded_) {
    // The host shard goes into this rank's slot first; the all-gather then runs in place.
    const Tensor host = swapped_ ? swapped_->pin(swap_key_) : value_shard_;
    Tensor own = full_.slice(0, shard_offset(), shard_offset() + shard_);
    own.copy_from(host, stream);
    if (swapped_) swapped_->unpin(swap_key_, stream);
    if (!single(comm))
      comm.all_gather(own.data(), full_.data(), static_cast<size_t>(shard_), value_dtype_, stream);
  } else if (single(comm)) {
    full_.slice(0, 0, shard_).copy_from(value_shard_, stream);
  } else {
    comm.all_gather(value_shard_.data(), full_.data(), static_cast<size_t>(shard_), value_dtype_,
                    stream);
  }
  point_values();
  state_ = ParamState::gathered;
}

void ParamGroup::release() {
  if (state_ != ParamState::gathered || replicated_)
    throw ValueError(kComponent,
                     str("block ", block_, ": release from state ", param_state_name(state_),
                         replicated_ ? " of a replicated group" : " (needs Gathered)"));
  for (nn::Parameter* p : params_)
    p->value = Tensor();
  full_ = Tensor();
  state_ = ParamState::released;
}

void ParamGroup::all_gather_in_place(comm::Communicator& comm, Stream stream) {
  ZT_ASSERT(replicated_ && state_ == ParamState::gathered, kComponent,
            "in-place all-gather needs a replicated group");
  if (single(comm)) return;
  comm.all_gather(value_shard_.data(), full_.data(), static_cast<size_t>(shard_), value_dtype_,
                  stream);
}

void ParamGroup::acquire_grad(DType dtype, Stream stream) {
  if (grad_full_.defined()) return;
  grad_full_ = Tensor::zeros({padded_numel()}, dtype, device_, stream);
  for (size_t i = 0; i < params_.size(); ++i) {
    nn::Parameter& p = *params_[i];
    p.grad = grad_full_.slice(0, offsets_[i], offsets_[i] + numel_of(p.shape)).view(p.shape);
  }
}

void ParamGroup::zero_full_grad(Stream stream) {
  if (grad_full_.defined()) grad_full_.fill(0.0, stream);
}

void ParamGroup::prepare_grad_shard(Stream stream) {
  if (!grad_shard_.defined() ||
      (grad_full_.defined() && grad_shard_.storage() == grad_full_.storage()))
    grad_shard_ = Tensor::empty({shard_}, grad_full_.defined() ? grad_full_.dtype() : DType::f32,
                                device_, stream);
}

Tensor ParamGroup::reduce_grad(const ShardComms& shards, bool keep_full, Stream stream,
                               std::optional<DType> comm_dtype) {
  ZT_ASSERT(shards.shard().size() == world_, kComponent, "block ", block_, ": a group of world ",
            world_, " reduced over ", shards.shard().size(), " ranks");
  const bool alone = single(shards.world());
  if (!grad_full_.defined())
    throw ValueError(kComponent,
                     str("block ", block_, ": reduce_grad without a gradient (no backward ran)"));
  const DType dtype = grad_full_.dtype();
  const DType wire = comm_dtype.value_or(dtype);
  Tensor own = grad_full_.slice(0, shard_offset(), shard_offset() + shard_);
  if (keep_full) {
    // In place: this rank's chunk of the send buffer receives its reduction.
    if (!alone) reduce_scatter_grads(shards, grad_full_, own, wire, stream);
    grad_shard_ = own;
    return {};
  }
  if (!grad_shard_.defined() || grad_shard_.storage() == grad_full_.storage())
    grad_shard_ = Tensor::empty({shard_}, dtype, grad_full_.device(), stream);
  if (alone)
    grad_shard_.copy_from(own, stream);
  else
    reduce_scatter_grads(shards, grad_full_, grad_shard_, wire, stream);
  for (nn::Parameter* p : params_)
    p->grad = Tensor();
  Tensor dropped = std::move(grad_full_);
  grad_full_ = Tensor();
  return dropped;
}

int64_t ParamGroup::value_bytes() const {
  int64_t b = full_.defined() ? static_cast<int64_t>(full_.nbytes()) : 0;
  if (!replicated_ && !shard_offloaded_ && value_shard_.defined())
    b += static_cast<int64_t>(value_shard_.nbytes());
  return b;
}

int64_t ParamGroup::host_value_bytes() const {
  return shard_offloaded_ && value_shard_.defined() ? static_cast<int64_t>(value_shard_.nbytes())
                                                     : 0;
}

void ParamGroup::offload_shard(const std::string& pin_key, Stream stream) {
  if (!materialized_ || replicated_ || shard_offloaded_)
    throw ValueError(kComponent, str("block ", block_, ": only a materialized sharded group's "
                                     "value shard moves to host memory, once"));
  Tensor host = host_buffer(shard_, value_dtype_, pin_key);
  host.copy_from(value_shard_, stream);
  synchronize(stream);
  value_shard_ = std::move(host);
  shard_offloaded_ = true;
}

void ParamGroup::swap_out_shard(SwappedShards& home, size_t key, Stream stream) {
  if (!materialized_ || replicated_ || shard_offloaded_)
    throw ValueError(kComponent, str("block ", block_, ": only a materialized sharded group's "
                                     "value shard moves to a swap file, once"));
  home.store(key, value_shard_, stream);
  value_shard_ = Tensor();
  swapped_ = &home;
  swap_key_ = key;
  shard_offloaded_ = true;
}

void ParamGroup::read_shard(const Tensor& dst) const {
  ZT_ASSERT(swapped_, kComponent, "read_shard of a shard that is not swapped out");
  swapped_->load(swap_key_, dst);
}

void ParamGroup::write_shard(const Tensor& src, Stream stream) {
  ZT_ASSERT(swapped_, kComponent, "write_shard of a shard that is not swapped out");
  swapped_->store(swap_key_, src, stream);
}

int64_t ParamGroup::grad_bytes() const {
  int64_t b = grad_full_.defined() ? static_cast<int64_t>(grad_full_.nbytes()) : 0;
  if (grad_shard_.defined() &&
      !(grad_full_.defined() && grad_shard_.storage() == grad_full_.storage()))
    b += static_cast<int64_t>(grad_shard_.nbytes());
  return b;
}

}  // namespace zt::zero
