// Offload's device <-> host copies; see host_copies.h.
#include "zerotrain/zero/host_copies.h"

#include <utility>

#include "zerotrain/zero/host_buffer.h"

namespace zt::zero {

HostCopies::HostCopies(const ZeroContext& ctx, std::string pin_key)
    : device_(ctx.device()), pin_key_(std::move(pin_key)) {
  if (!device_.is_cuda()) return;
  to_host_ = ctx.streams().to_host();
  to_device_ = ctx.streams().to_device();
  step_begun_.emplace(device_);
}

HostCopies::~HostCopies() {
  synchronize();
}

void HostCopies::synchronize() const {
  if (to_host_) zt::synchronize(*to_host_);
  if (to_device_) zt::synchronize(*to_device_);
}

void HostCopies::add_events(HostGroup& h) const {
  if (!to_host_) return;
  h.grad_ready.emplace(device_);
  h.copied_in.emplace(device_);
  h.copied_out.emplace(device_);
}

Tensor HostCopies::host_copy(const Tensor& value, Stream stream) const {
  Tensor h = host_buffer(value.numel(), value.dtype(), pin_key_);
  h.copy_from(value, stream);
  return h;
}

void HostCopies::gradient_to_host(HostGroup& h, const Tensor& grad, Stream ready) {
  if (!h.grad.defined() || h.grad.dtype() != grad.dtype() || h.grad.numel() != grad.numel()) {
    if (h.copied_in) h.copied_in->synchronize();  // the old buffer may still be written
    h.grad = host_buffer(grad.numel(), grad.dtype(), pin_key_);
  }
  if (to_host_) {
    h.grad_ready->record(ready);
    h.grad_ready->wait(*to_host_);
    h.grad.copy_from(grad, *to_host_);
    h.copied_in->record(*to_host_);
  } else {
    h.grad.copy_from(grad, ready);
    zt::synchronize(ready);
  }
  h.has_grad = true;
}

void HostCopies::gradient_copied_before(const HostGroup& h, Stream stream) const {
  if (h.copied_in) h.copied_in->wait(stream);
}

void HostCopies::await_host_side(const HostGroup& h) const {
  if (h.copied_in) h.copied_in->synchronize();
  if (h.copied_out) h.copied_out->synchronize();  // the last step's values left the host
}

void HostCopies::values_after(Stream stream) {
  if (!to_device_) return;
  step_begun_->record(stream);
  step_begun_->wait(*to_device_);
}

void HostCopies::values_to_device(HostGroup& h, Tensor dst, Stream after) {
  if (to_device_) {
    dst.copy_from(h.value, *to_device_);  // after values_after (compute work on the old values)
    h.copied_out->record(*to_device_);
  } else {
    dst.copy_from(h.value, after);
  }
}

void HostCopies::values_copied_before(const HostGroup& h, Stream stream) const {
  if (to_device_) h.copied_out->wait(stream);
}

}  // namespace zt::zero
