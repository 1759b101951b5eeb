// Streams and events. `Stream` is a cheap non-owning handle passed to every op; `CudaStream` and
// `CudaEvent` own their CUDA objects (RAII). On the CPU a Stream is the null handle and ops run
// synchronously.
#pragma once

#include "zerotrain/core/device.h"

namespace zt {

// Non-owning. handle == nullptr means the device's legacy default stream (or the host).
struct Stream {
  Device device = Device::cpu();
  void* handle = nullptr;  // cudaStream_t

  static Stream host() { return {}; }
  static Stream default_for(Device d) { return {d, nullptr}; }
  bool operator==(const Stream&) const = default;
};

// Blocks the host until all work queued on the stream is done (no-op for the host).
void synchronize(Stream s);
// Blocks until all work on the device is done.
void synchronize_device(Device d);

class CudaStream {
 public:
  // priority: lower numbers are higher priority, as in cudaStreamCreateWithPriority.
  explicit CudaStream(Device d, int priority = 0);
  ~CudaStream();
  CudaStream(CudaStream&& o) noexcept : s_(o.s_) { o.s_.handle = nullptr; }
  CudaStream& operator=(CudaStream&& o) noexcept;
  CudaStream(const CudaStream&) = delete;
  CudaStream& operator=(const CudaStream&) = delete;

  Stream get() const { return s_; }
  operator Stream() const { return s_; }  // NOLINT: a CudaStream is usable wherever a Stream is

 private:
  Stream s_;
};

class CudaEvent {
 public:
  // timing: create with timing enabled (for elapsed_ms); otherwise a cheap sync-only event.
  explicit CudaEvent(Device d, bool timing = false);
  ~CudaEvent();
  CudaEvent(CudaEvent&& o) noexcept : device_(o.device_), e_(o.e_) { o.e_ = nullptr; }
  CudaEvent& operator=(CudaEvent&& o) noexcept;
  CudaEvent(const CudaEvent&) = delete;
  CudaEvent& operator=(const CudaEvent&) = delete;

  void record(Stream s);
  void wait(Stream s) const;  // s waits for the recorded work, without blocking the host
  void synchronize() const;
  float elapsed_ms(const CudaEvent& start) const;  // time from `start` to this event

 private:
  Device device_;
  void* e_ = nullptr;  // cudaEvent_t
};

}  // namespace zt
