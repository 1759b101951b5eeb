// CPU-only build: the CUDA entry points of core/ either work on the host or throw DeviceError.
#include <cstring>

#include "zerotrain/core/profile_range.h"
#include "zerotrain/core/tensor.h"

namespace zt {

int cuda_device_count() {
  return 0;
}
std::string cuda_device_name(int) {
  throw_no_cuda("device");
}

size_t cuda_device_memory(int) {
  throw_no_cuda("device");
}

void synchronize(Stream) {}
void synchronize_device(Device) {}

void profile_range_push(const char*) {}
void profile_range_pop() {}

void copy_bytes(void* dst, Device dst_dev, const void* src, Device src_dev, size_t n, Stream) {
  if (n == 0) return;
  if (!dst_dev.is_cpu() || !src_dev.is_cpu()) throw_no_cuda("copy");
  std::memcpy(dst, src, n);
}

void zero_bytes(void* dst, Device dev, size_t n, Stream) {
  if (n == 0) return;
  if (!dev.is_cpu()) throw_no_cuda("zero");
  std::memset(dst, 0, n);
}

CudaStream::CudaStream(Device, int) {
  throw_no_cuda("stream");
}
CudaStream::~CudaStream() = default;
CudaStream& CudaStream::operator=(CudaStream&& o) noexcept {
  s_ = o.s_;
  return *this;
}
CudaEvent::CudaEvent(Device d, bool) : device_(d) {
  throw_no_cuda("event");
}
CudaEvent::~CudaEvent() = default;
CudaEvent& CudaEvent::operator=(CudaEvent&& o) noexcept {
  device_ = o.device_;
  return *this;
}
void CudaEvent::record(Stream) {
  throw_no_cuda("event");
}
void CudaEvent::wait(Stream) const {
  throw_no_cuda("event");
}
void CudaEvent::synchronize() const {
  throw_no_cuda("event");
}
float CudaEvent::elapsed_ms(const CudaEvent&) const {
  throw_no_cuda("event");
}

Allocator& cuda_allocator(int) {
  throw_no_cuda("alloc");
}
Allocator& pinned_host_allocator() {
  throw_no_cuda("alloc");
}
void set_cuda_memory_cap(int, size_t) {
  throw_no_cuda("alloc");
}

namespace cuda_core {
void fill(const Tensor&, double, Stream) {
  throw_no_cuda("fill");
}
void strided_copy(const Tensor&, const Tensor&, Stream) {
  throw_no_cuda("copy");
}
}  // namespace cuda_core

}  // namespace zt
