// CUDA runtime pieces of core/: device queries, byte copies, streams, events and the caching device
// allocator (the pinned host allocator: pinned_host_allocator.cpp).
#include <cstring>
#include <memory>
#include <mutex>
#include <vector>

#include "zerotrain/core/caching_allocator.h"
#include "zerotrain/core/cuda/cuda_check.h"
#include "zerotrain/core/host_cap.h"
#include "zerotrain/core/tensor.h"

namespace zt {

namespace detail {
void throw_cuda_error(cudaError_t e, const char* call, const char* file, int line) {
  if (e == cudaErrorMemoryAllocation) cudaGetLastError();  // clear the sticky-free error state
  throw BackendError("cuda", str(call, " failed: ", cudaGetErrorName(e), " (",
                                 cudaGetErrorString(e), ") at ", file, ":", line));
}
void throw_cublas_error(cublasStatus_t s, const char* call, const char* file, int line) {
  throw BackendError("cublas", str(call, " failed: ", cublasGetStatusName(s), " (",
                                   cublasGetStatusString(s), ") at ", file, ":", line));
}
}  // namespace detail

CudaDeviceGuard::CudaDeviceGuard(Device d) {
  ZT_CUDA_CHECK(cudaGetDevice(&prev_));
  if (d.is_cuda() && d.index != prev_) ZT_CUDA_CHECK(cudaSetDevice(d.index));
}
CudaDeviceGuard::~CudaDeviceGuard() {
  if (prev_ >= 0) cudaSetDevice(prev_);
}

int cuda_device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return n;
}

std::string cuda_device_name(int index) {
  cudaDeviceProp prop{};
  ZT_CUDA_CHECK(cudaGetDeviceProperties(&prop, index));
  return prop.name;
}

size_t cuda_device_memory(int index) {
  cudaDeviceProp prop{};
  ZT_CUDA_CHECK(cudaGetDeviceProperties(&prop, index));
  return prop.totalGlobalMem;
}

void synchronize(Stream s) {
  if (s.device.is_cpu() && !s.handle) return;
  CudaDeviceGuard g(s.device);
  ZT_CUDA_CHECK(cudaStreamSynchronize(to_cuda(s)));
}

void synchronize_device(Device d) {
  if (d.is_cpu()) return;
  CudaDeviceGuard g(d);
  ZT_CUDA_CHECK(cudaDeviceSynchronize());
}

void copy_bytes(void* dst, Device dst_dev, const void* src, Device src_dev, size_t n, Stream s) {
  if (n == 0) return;
  if (dst_dev.is_cpu() && src_dev.is_cpu()) {
    std::memcpy(dst, src, n);
    return;
  }
  const Device on = dst_dev.is_cuda() ? dst_dev : src_dev;
  CudaDeviceGuard g(on);
  ZT_CUDA_CHECK(cudaMemcpyAsync(dst, src, n, cudaMemcpyDefault, to_cuda(s)));
}

void zero_bytes(void* dst, Device dev, size_t n, Stream s) {
  if (n == 0) return;
  if (dev.is_cpu()) {
    std::memset(dst, 0, n);
    return;
  }
  CudaDeviceGuard g(dev);
  ZT_CUDA_CHECK(cudaMemsetAsync(dst, 0, n, to_cuda(s)));
}

// ---- streams and events -------------------------------------------------------------------------

CudaStream::CudaStream(Device d, int priority) {
  CudaDeviceGuard g(d);
  cudaStream_t st;
  ZT_CUDA_CHECK(cudaStreamCreateWithPriority(&st, cudaStreamNonBlocking, priority));
  s_ = {d, st};
}
CudaStream::~CudaStream() {
  if (s_.handle) cudaStreamDestroy(to_cuda(s_));
}
CudaStream& CudaStream::operator=(CudaStream&& o) noexcept {
  if (this != &o) {
    if (s_.handle) cudaStreamDestroy(to_cuda(s_));
    s_ = o.s_;
    o.s_.handle = nullptr;
  }
  return *this;
}

CudaEvent::CudaEvent(Device d, bool timing) : device_(d) {
  CudaDeviceGuard g(d);
  cudaEvent_t e;
  ZT_CUDA_CHECK(cudaEventCreateWithFlags(&e, timing ? cudaEventDefault : cudaEventDisableTiming));
  e_ = e;
}
CudaEvent::~CudaEvent() {
  if (e_) cudaEventDestroy(static_cast<cudaEvent_t>(e_));
}
CudaEvent& CudaEvent::operator=(CudaEvent&& o) noexcept {
  if (this != &o) {
    if (e_) cudaEventDestroy(static_cast<cudaEvent_t>(e_));
    device_ = o.device_;
    e_ = o.e_;
    o.e_ = nullptr;
  }
  return *this;
}
void CudaEvent::record(Stream s) {
  CudaDeviceGuard g(device_);
  ZT_CUDA_CHECK(cudaEventRecord(static_cast<cudaEvent_t>(e_), to_cuda(s)));
}
void CudaEvent::wait(Stream s) const {
  CudaDeviceGuard g(s.device);
  ZT_CUDA_CHECK(cudaStreamWaitEvent(to_cuda(s), static_cast<cudaEvent_t>(e_), 0));
}
void CudaEvent::synchronize() const {
  ZT_CUDA_CHECK(cudaEventSynchronize(static_cast<cudaEvent_t>(e_)));
}
float CudaEvent::elapsed_ms(const CudaEvent& start) const {
  float ms = 0;
  ZT_CUDA_CHECK(
      cudaEventElapsedTime(&ms, static_cast<cudaEvent_t>(start.e_), static_cast<cudaEvent_t>(e_)));
  return ms;
}

// ---- allocators ---------------------------------------------------------------------------------

namespace {

BlockSource cuda_source(int index) {
  BlockSource s;
  s.allocate = [index](size_t n) -> void* {
    CudaDeviceGuard g(Device::cuda(index));
    void* p = nullptr;
    cudaError_t e = cudaMalloc(&p, n);
    if (e == cudaErrorMemoryAllocation) {
      cudaGetLastError();
      return nullptr;
    }
    ZT_CUDA_CHECK(e);
    return p;
  };
  s.release = [index](void* p) {  // never throws: it may run while the CUDA runtime shuts down
    int prev = -1;
    if (cudaGetDevice(&prev) != cudaSuccess) prev = -1;
    cudaSetDevice(index);
    cudaFree(p);
    if (prev >= 0) cudaSetDevice(prev);
    cudaGetLastError();
  };
  s.free_bytes = [index]() -> size_t {
    CudaDeviceGuard g(Device::cuda(index));
    size_t free = 0, total = 0;
    if (cudaMemGetInfo(&free, &total) != cudaSuccess) cudaGetLastError();
    return free;
  };
  return s;
}

CachingAllocator& caching_for(int index) {
  // Never destroyed: at process exit the CUDA runtime may already be unloading, and the driver
  // frees device memory anyway.
  static std::mutex& mu = *new std::mutex;
  static auto& all = *new std::vector<std::unique_ptr<CachingAllocator>>;
  std::lock_guard lock(mu);
  const int n = cuda_device_count();
  if (index < 0 || index >= n)
    throw DeviceError("alloc", str("no CUDA device cuda:", index, " (", n, " visible)"));
  if (all.empty()) all.resize(static_cast<size_t>(n));
  if (!all[index])
    all[index] = std::make_unique<CachingAllocator>(Device::cuda(index), cuda_source(index));
  return *all[index];
}

}  // namespace

Allocator& cuda_allocator(int index) {
  return caching_for(index);
}

void set_cuda_memory_cap(int index, size_t bytes) {
  caching_for(index).set_cap(bytes);
}

}  // namespace zt
