// ZeRO stage 0: bucketed, overlapped gradient all-reduce (see [Note: data-parallel step]).
#include "zerotrain/zero/data_parallel.h"

#include <cstring>

#include "zerotrain/comm/tensor_collectives.h"
#include "zerotrain/core/error.h"
#include "zerotrain/zero/grad_comm.h"

namespace zt::zero {

DataParallel::DataParallel(std::vector<std::unique_ptr<nn::Block>>& blocks,
                           comm::Communicator& comm, Device device, Stream compute,
                           DataParallelOptions options, CudaStream* reduce_stream)
    : blocks_(blocks),
      comm_(comm),
      device_(device),
      compute_(compute),
      options_(options),
      buckets_(blocks, options.bucket_elements, device, options.grad_dtype),
      comm_dtype_(options.comm_dtype.value_or(buckets_.buckets().front().flat.dtype())),
      state_(buckets_.buckets().size(), BucketState::idle) {
  check_grad_dtype("communication dtype", comm_dtype_);
  if (options_.overlap_comm) comm_stream_ = reduce_stream;
  if (comm_stream_) {
    ready_events_.reserve(state_.size());
    for (size_t i = 0; i < state_.size(); ++i)
      ready_events_.emplace_back(device);
    comm_done_.emplace(device);
  }
  if (options_.broadcast_values) broadcast_parameters();
}

DataParallel::~DataParallel() = default;

void DataParallel::broadcast_parameters() {
  for (auto& block : blocks_)
    for (nn::Parameter* p : block->parameters()) {
      if (!p->value.is_contiguous())
        throw ValueError("data_parallel", str("parameter ", p->name, " is not contiguous"));
      comm_.broadcast(p->value.data(), static_cast<size_t>(p->value.numel()), p->value.dtype(), 0,
                      compute_);
    }
  synchronize(compute_);
}

void DataParallel::begin_micro_step(bool boundary) {
  for (size_t i = 0; i < state_.size(); ++i)
    if (state_[i] != BucketState::idle)
      throw ValueError("data_parallel",
                       str("bucket ", i,
                           " is still being reduced: finish_gradient_sync() was not "
                           "called after the last boundary micro-step"));
  boundary_ = boundary;
}

void DataParallel::after_block_backward(size_t block) {
  if (!boundary_ || comm_.size() == 1) return;
  for (size_t b : buckets_.ready_after(block))
    reduce_bucket(b);
}

void DataParallel::reduce_bucket(size_t index) {
  ZT_ASSERT(state_[index] == BucketState::idle, "data_parallel", "bucket reduced twice");
  const GradBucket& b = buckets_.buckets()[index];
  if (comm_stream_) {
    ready_events_[index].record(compute_);
    ready_events_[index].wait(*comm_stream_);
    all_reduce_grads(comm_, b.flat, comm_dtype_, *comm_stream_);
    state_[index] = BucketState::launched;
  } else {
    all_reduce_grads(comm_, b.flat, comm_dtype_, compute_);
    state_[index] = BucketState::reduced;
  }
}

void DataParallel::finish_gradient_sync() {
  if (!boundary_)
    throw ValueError("data_parallel", "finish_gradient_sync() outside a boundary micro-step");
  if (comm_.size() > 1) {
    for (size_t i = 0; i < state_.size(); ++i)
      if (state_[i] == BucketState::idle)
        throw ValueError("data_parallel",
                         str("bucket ", i, " (blocks ", buckets_.buckets()[i].first_block, "-",
                             buckets_.buckets()[i].last_block,
                             ") was never reduced: the backward hook did not run for it"));
    if (comm_stream_) {
      comm_done_->record(*comm_stream_);
      comm_done_->wait(compute_);
    }
  }
  state_.assign(state_.size(), BucketState::idle);
  boundary_ = false;
}

void DataParallel::zero_grad() {
  buckets_.zero(compute_);
}

double DataParallel::sum_over_ranks(double value) {
  uint64_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  double sum = 0;
  for (uint64_t w : comm::all_gather_words(comm_, bits, device_, compute_)) {
    double v;
    std::memcpy(&v, &w, sizeof v);
    sum += v;
  }
  return sum;
}

uint64_t DataParallel::parameter_checksum() {
  uint64_t h = 14695981039346656037ull;  // FNV-1a offset basis
  for (auto& block : blocks_)
    for (nn::Parameter* p : block->parameters()) {
      const Tensor host = p->value.to(Device::cpu(), compute_);
      synchronize(compute_);
      const auto* bytes = static_cast<const unsigned char*>(host.data());
      for (size_t i = 0; i < host.nbytes(); ++i)
        h = (h ^ bytes[i]) * 1099511628211ull;
    }
  return h;
}

void DataParallel::check_parameters_identical() {
  const std::vector<uint64_t> sums =
      comm::all_gather_words(comm_, parameter_checksum(), device_, compute_);
  std::string differ;
  for (size_t r = 1; r < sums.size(); ++r)
    if (sums[r] != sums[0]) differ += (differ.empty() ? "" : ", ") + std::to_string(r);
  if (!differ.empty())
    throw ValueError("data_parallel",
                     str("parameters of rank(s) ", differ, " differ from rank 0's (checksums)"));
}

}  // namespace zt::zero
