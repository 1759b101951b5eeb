// Cutting the gradients into flat buckets (see [Note: bucket order] in grad_buckets.h).
#include "zerotrain/zero/grad_buckets.h"

#include "zerotrain/core/error.h"
#include "zerotrain/zero/grad_comm.h"

namespace zt::zero {

GradBuckets::GradBuckets(std::vector<std::unique_ptr<nn::Block>>& blocks, int64_t bucket_elements,
                         Device device, std::optional<DType> grad_dtype)
    : ready_after_(blocks.size()) {
  if (bucket_elements < 0)
    throw ValueError("grad_buckets",
                     str("bucket size must be >= 0 elements, got ", bucket_elements));
  // Plan: which blocks go into which bucket, walking backward's order.
  struct Plan {
    std::vector<nn::Parameter*> params;
    size_t first = 0, last = 0;
    int64_t elements = 0;
  };
  std::vector<Plan> plans;
  Plan cur;
  bool open = false;
  for (size_t i = blocks.size(); i-- > 0;) {
    const std::vector<nn::Parameter*> ps = blocks[i]->parameters();
    if (ps.empty()) continue;
    if (!open) {
      cur = Plan{};
      cur.last = i;
      open = true;
    }
    cur.first = i;
    for (nn::Parameter* p : ps) {
      cur.params.push_back(p);
      cur.elements += numel_of(p->shape);
    }
    if (cur.elements >= bucket_elements) {
      plans.push_back(std::move(cur));
      open = false;
    }
  }
  if (open) plans.push_back(std::move(cur));
  if (plans.empty()) throw ValueError("grad_buckets", "the model has no parameters");
  // Without a given dtype the buckets take the gradients' dtype, which the model chose (f32, or
  // the compute dtype).
  DType dtype = grad_dtype.value_or(DType::f32);
  if (grad_dtype) check_grad_dtype("gradient dtype", *grad_dtype);
  if (!grad_dtype) {
    const nn::Parameter* first = plans.front().params.front();
    if (first->grad.defined()) dtype = first->grad.dtype();
    for (const Plan& plan : plans)
      for (const nn::Parameter* p : plan.params)
        if (p->grad.defined() && p->grad.dtype() != dtype)
          throw DTypeError("grad_buckets",
                           str("gradient of ", p->name, " is ", dtype_name(p->grad.dtype()),
                               ", others are ", dtype_name(dtype)));
  }

  for (Plan& plan : plans) {
    GradBucket b;
    b.flat = Tensor::zeros({plan.elements}, dtype, device);
    b.first_block = plan.first;
    b.last_block = plan.last;
    int64_t offset = 0;
    for (nn::Parameter* p : plan.params) {
      const int64_t n = numel_of(p->shape);
      p->grad = b.flat.slice(0, offset, offset + n).view(p->shape);
      offset += n;
    }
    b.params = std::move(plan.params);
    total_ += plan.elements;
    ready_after_[b.first_block].push_back(buckets_.size());
    buckets_.push_back(std::move(b));
  }
}

void GradBuckets::zero(Stream stream) {
  for (GradBucket& b : buckets_)
    b.flat.fill(0.0, stream);
}

}  // namespace zt::zero
