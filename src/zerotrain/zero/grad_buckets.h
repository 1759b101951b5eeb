// Gradient buckets for data-parallel reduction: the model's gradients re-pointed into a few flat
// buffers, filled in the order backward produces them, so that a whole bucket is reduced with one
// collective as soon as its last block's backward is done. Tested by
// tests/zero/test_grad_buckets.cpp.
//
// [Note: bucket order]
// Blocks run backward last to first, so buckets are cut walking the blocks in reverse: bucket 0
// holds the last blocks' gradients and is complete first. A bucket is cut at block boundaries
// only (a block's gradients are finished together), once it holds at least `bucket_elements`
// elements; a block larger than that is a bucket of its own. A parameter shared by two blocks (a
// tied embedding) lives with its owner, the block that runs backward last, so its bucket is ready
// only when both contributions are in.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "zerotrain/core/device.h"
#include "zerotrain/core/tensor.h"
#include "zerotrain/nn/block.h"

namespace zt::zero {

struct GradBucket {
  Tensor flat;  // [elements] the accumulation dtype, the gradients of `params`, back to back
  std::vector<nn::Parameter*> params;  // in buffer order
  size_t first_block = 0;  // lowest block index with parameters here: ready after its backward
  size_t last_block = 0;   // highest block index with parameters here
};

class GradBuckets {
 public:
  // Allocates the buffers (zeroed) on `device` and points every owned parameter's `grad` into
  // them. Their dtype: `dtype` (the accumulation dtype, [Note: communication dtype] in
  // grad_comm.h), or unset, the dtype the gradients have (f32 when none is allocated). Throws
  // ValueError for bucket_elements < 0 or a model without parameters, DTypeError when `dtype` is
  // unset and the gradients' dtypes differ.
  GradBuckets(std::vector<std::unique_ptr<nn::Block>>& blocks, int64_t bucket_elements,
              Device device, std::optional<DType> dtype = std::nullopt);

  const std::vector<GradBucket>& buckets() const { return buckets_; }
  // Indices of the buckets that become complete when `block`'s backward has run.
  const std::vector<size_t>& ready_after(size_t block) const { return ready_after_[block]; }
  int64_t total_elements() const { return total_; }
  // Zeroes every bucket (one fill per buffer instead of one per parameter).
  void zero(Stream stream = {});

 private:
  std::vector<GradBucket> buckets_;
  std::vector<std::vector<size_t>> ready_after_;  // per block
  int64_t total_ = 0;
};

}  // namespace zt::zero
