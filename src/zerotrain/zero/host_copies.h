// The copies between the device and host memory that optimizer offload makes ([Note: optimizer
// offload] in shard_optimizer.h): a host group's gradient to the host as soon as it is final, and
// its updated values back to the device run. On a GPU they run on the context's to_host and
// to_device streams (comm_streams.h), ordered by events; on a CPU run they are synchronous
// host-to-host copies on the caller's stream. Tested by tests/zero/test_shard_optimizer.cpp and
// tests/mpi/test_zero_parity.cpp.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "zerotrain/core/stream.h"
#include "zerotrain/core/tensor.h"
#include "zerotrain/zero/zero_context.h"

namespace zt::zero {

// One host group: the host copies of a group's value run and gradient, and their events.
struct HostGroup {
  size_t group = 0;
  Tensor value;  // [run] value dtype: what the CPU optimizer steps, copied to the device run after
  Tensor grad;   // [run] gradient dtype, once a gradient arrived
  bool has_grad = false;
  // GPU only: the gradient is final on its stream; copied to the host; values copied back.
  std::optional<CudaEvent> grad_ready, copied_in, copied_out;
};

class HostCopies {
 public:
  // pin_key: the key that asked for page-locked host buffers (host_buffer.h); empty: none.
  HostCopies(const ZeroContext& ctx, std::string pin_key);
  ~HostCopies();  // waits for the copies in flight: they read or write the host groups' memory
  HostCopies(const HostCopies&) = delete;
  HostCopies& operator=(const HostCopies&) = delete;

  // GPU: the copies are asynchronous on the copy streams.
  bool async() const { return to_host_ != nullptr; }
  // A new host group's events (GPU only).
  void add_events(HostGroup& h) const;
  // A host buffer holding `value`, once the work queued on `stream` is done.
  Tensor host_copy(const Tensor& value, Stream stream) const;
  // Starts copying `grad` (final once the work queued on `ready` is done) into h's host gradient,
  // making that buffer first when it has another size or dtype.
  void gradient_to_host(HostGroup& h, const Tensor& grad, Stream ready);
  // `stream` (later compute work) waits for h's gradient copy.
  void gradient_copied_before(const HostGroup& h, Stream stream) const;
  // Blocks until h's gradient is in host memory and its last values copy left it.
  void await_host_side(const HostGroup& h) const;
  // The next copies to the device come after the compute work queued on `stream` so far (the
  // last reads of the old values).
  void values_after(Stream stream);
  // Starts copying h's values into `dst` (the device run); CPU: on `after`.
  void values_to_device(HostGroup& h, Tensor dst, Stream after);
  // `stream` waits for h's values copy to the device.
  void values_copied_before(const HostGroup& h, Stream stream) const;
  void synchronize() const;  // both copy streams

 private:
  Device device_;
  std::string pin_key_;
  // GPU: the copy streams of the context; null on a CPU run (copies are synchronous).
  CudaStream* to_host_ = nullptr;
  CudaStream* to_device_ = nullptr;
  std::optional<CudaEvent> step_begun_;  // the copies back wait for the step's compute work
};

}  // namespace zt::zero
