// The parts of an offloaded optimizer step, each measured alone (train_bench --measure-parts), so
// a step can be held against max(GPU compute, CPU Adam, PCIe transfer) of the same run:
//   - the CPU Adam: optim::FlatOptimizer on host tensors of the run's value and gradient
//     dtypes (f32 masters and moments), with the run's OpenMP threads, over exactly the shard's
//     element count, stepped in slabs as the engine steps sub-groups (a slab is far larger than
//     any cache, so the rate is the one the whole shard would see);
//   - the PCIe transfer: pinned device->host copies of the gradient shard's bytes and host->device
//     copies of the value shard's bytes (Tensor::copy_from, cudaMemcpyAsync), in slabs;
//   - the ceiling: pinned host->device and device->host GB/s at 256 MiB;
//   - the host's peak resident memory (VmHWM of /proc/self/status) and a reset of it.
// Used by bench/train_bench.cpp (the GPU compute part needs the model, so it is measured there).
#pragma once

#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "zerotrain/core/allocator.h"
#include "zerotrain/core/tensor.h"
#include "zerotrain/optim/flat_optimizer.h"

namespace zt::bench {

inline double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Peak resident bytes of this process (VmHWM), 0 where /proc is missing.
inline int64_t host_peak_bytes() {
  std::ifstream status("/proc/self/status");
  std::string key;
  while (status >> key) {
    if (key == "VmHWM:") {
      int64_t kib = 0;
      status >> kib;
      return kib * 1024;
    }
    status.ignore(1 << 20, '\n');
  }
  return 0;
}

// Restarts VmHWM from the current resident size (Linux's clear_refs "5"); false where refused.
inline bool reset_host_peak() {
  std::ofstream clear("/proc/self/clear_refs");
  clear << "5";
  clear.flush();
  return static_cast<bool>(clear);
}

inline int64_t host_ram_bytes() {
  return static_cast<int64_t>(sysconf(_SC_PHYS_PAGES)) *
         static_cast<int64_t>(sysconf(_SC_PAGESIZE));
}

struct CpuAdamPart {
  double seconds = 0;    // one update of `elements` elements
  int64_t elements = 0;  // the shard
  int64_t slab = 0;      // elements per FlatOptimizer step
  int threads = 0;       // OpenMP threads
};

// One Adam update of `elements` elements with `value_dtype` values (f32 masters and moments when
// 16-bit) and `grad_dtype` gradients, in slabs of at most `slab_limit` elements.
inline CpuAdamPart time_cpu_adam(int64_t elements, DType value_dtype, DType grad_dtype,
                                 int64_t slab_limit, const optim::OptimizerConfig& config) {
  CpuAdamPart part;
  part.elements = elements;
  part.slab = std::max<int64_t>(1, std::min(elements, slab_limit));
  part.threads = omp_get_max_threads();
  const int64_t k = part.slab;
  Tensor value = Tensor::empty({k}, value_dtype);
  value.fill(0.01);
  Tensor grad = Tensor::empty({k}, grad_dtype);
  grad.fill(0.001);
  optim::FlatOptimizer adam({{"slab", {k}, value_dtype, true}}, {{value, {{0, 0, k, 0}}}}, config,
                       optim::Precision::mixed, nullptr);
  const std::vector<Tensor> grads{grad};
  adam.step(grads, 1e-5f);  // creates the state: every page touched before the clock starts
  const int64_t slabs = (elements + k - 1) / k;
  const auto t0 = std::chrono::steady_clock::now();
  for (int64_t i = 0; i < slabs; ++i)
    adam.step(grads, 1e-5f);
  part.seconds = seconds_since(t0) * static_cast<double>(elements) / static_cast<double>(slabs * k);
  return part;
}

// Seconds to copy `bytes` between pinned host memory and `device` (to_device: host->device), in
// copies of at most `slab_bytes`, queued on `stream` and timed to its completion.
inline double time_pinned_copies(int64_t bytes, bool to_device, Device device, Stream stream,
                                 int64_t slab_bytes) {
  const int64_t k = std::max<int64_t>(4, std::min(bytes, slab_bytes)) / 4;  // f32 elements
  Tensor host = Tensor::empty({k}, DType::f32, pinned_host_allocator());
  Tensor dev = Tensor::empty({k}, DType::f32, device, stream);
  dev.fill(0.0, stream);
  host.copy_from(dev, stream);
  auto copy = [&] {
    if (to_device)
      dev.copy_from(host, stream);
    else
      host.copy_from(dev, stream);
  };
  copy();
  synchronize(stream);
  const int64_t copies = std::max<int64_t>(1, (bytes + 4 * k - 1) / (4 * k));
  const auto t0 = std::chrono::steady_clock::now();
  for (int64_t i = 0; i < copies; ++i)
    copy();
  synchronize(stream);
  return seconds_since(t0) * static_cast<double>(bytes) / static_cast<double>(copies * 4 * k);
}

struct PinnedBandwidth {
  double h2d_gbs = 0, d2h_gbs = 0;  // GB/s (1e9 bytes)
};

// The physical limit: 256 MiB copies between pinned host memory and `device`, ten each way.
inline PinnedBandwidth pinned_bandwidth(Device device, Stream stream) {
  constexpr int64_t kBytes = int64_t{256} << 20;
  PinnedBandwidth bw;
  bw.h2d_gbs = 10.0 * kBytes / time_pinned_copies(10 * kBytes, true, device, stream, kBytes) / 1e9;
  bw.d2h_gbs = 10.0 * kBytes / time_pinned_copies(10 * kBytes, false, device, stream, kBytes) / 1e9;
  return bw;
}

}  // namespace zt::bench
