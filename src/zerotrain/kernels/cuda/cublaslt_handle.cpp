// CublasLtHandle: per-device cuBLASLt handle, per-stream workspaces and the GEMM plan cache.
// Exercised by tests/kernels/test_gemm_cuda.cpp.
#include "zerotrain/kernels/cuda/cublaslt_handle.h"

#include <functional>
#include <vector>

#include "zerotrain/core/cuda/cuda_check.h"

namespace zt::kernels::cuda {

size_t GemmKeyHash::operator()(const GemmKey& k) const {
  size_t h = 0;
  auto mix = [&h](uint64_t v) {
    h ^= std::hash<uint64_t>{}(v) + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  };
  mix(static_cast<uint64_t>(k.m));
  mix(static_cast<uint64_t>(k.n));
  mix(static_cast<uint64_t>(k.k));
  mix((uint64_t{k.trans_a} << 0) | (uint64_t{k.trans_b} << 1) | (uint64_t{k.bias} << 2) |
      (static_cast<uint64_t>(k.ab) << 8) | (static_cast<uint64_t>(k.c) << 16) |
      (uint64_t{k.align_a} << 24) | (uint64_t{k.align_b} << 32) | (uint64_t{k.align_c} << 40) |
      (uint64_t{k.align_bias} << 48));
  return h;
}

GemmPlan::~GemmPlan() {
  if (layout_c) cublasLtMatrixLayoutDestroy(layout_c);
  if (layout_b) cublasLtMatrixLayoutDestroy(layout_b);
  if (layout_a) cublasLtMatrixLayoutDestroy(layout_a);
  if (desc) cublasLtMatmulDescDestroy(desc);
}

namespace {

// Every device's handle, created on first use.
struct HandleRegistry {
  // Reaching the caching allocator here constructs it before, and therefore destroys it after,
  // the handles whose workspaces it holds.
  explicit HandleRegistry(int index) : handles(static_cast<size_t>(cuda_device_count())) {
    (void)cuda_allocator(index);
  }
  std::mutex mu;
  std::vector<std::unique_ptr<CublasLtHandle>> handles;  // by device index
};

}  // namespace

CublasLtHandle& CublasLtHandle::for_device(Device d) {
  static HandleRegistry registry(d.index);
  std::lock_guard lock(registry.mu);
  if (d.index < 0 || static_cast<size_t>(d.index) >= registry.handles.size())
    throw DeviceError(
        "gemm", str("no CUDA device ", to_string(d), " (", registry.handles.size(), " visible)"));
  auto& h = registry.handles[static_cast<size_t>(d.index)];
  if (!h) h = std::make_unique<CublasLtHandle>(d);
  return *h;
}

CublasLtHandle::CublasLtHandle(Device d) : device_(d) {
  CudaDeviceGuard guard(d);
  ZT_CUBLAS_CHECK(cublasLtCreate(&handle_));
}

CublasLtHandle::~CublasLtHandle() {
  plans_.clear();
  workspaces_.clear();
  if (handle_) cublasLtDestroy(handle_);
}

void* CublasLtHandle::workspace(Stream s) {
  std::lock_guard lock(mu_);
  auto it = workspaces_.find(s.handle);
  if (it == workspaces_.end())
    it = workspaces_
             .emplace(s.handle,
                      Tensor::empty({static_cast<int64_t>(kWorkspaceBytes)}, DType::u8, device_, s))
             .first;
  return it->second.data();
}

GemmPlan* CublasLtHandle::find_plan(const GemmKey& key) {
  std::lock_guard lock(mu_);
  auto it = plans_.find(key);
  return it == plans_.end() ? nullptr : it->second.get();
}

GemmPlan& CublasLtHandle::add_plan(const GemmKey& key, std::unique_ptr<GemmPlan> plan) {
  std::lock_guard lock(mu_);
  auto it = plans_.try_emplace(key, std::move(plan)).first;
  return *it->second;
}

}  // namespace zt::kernels::cuda
