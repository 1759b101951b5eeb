// Per-device cuBLASLt state: the library handle, a 32 MiB workspace per stream, and a cache of
// matmul plans (descriptors plus the algorithm the heuristic chose) keyed by problem, so a repeated
// GEMM makes no heuristic query, no allocation and no host sync. See [Note: cuBLASLt workspaces].
// Include only from CUDA-backend sources. Exercised by tests/kernels/test_gemm_cuda.cpp.
#pragma once

#include <cublasLt.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "zerotrain/core/stream.h"
#include "zerotrain/core/tensor.h"

namespace zt::kernels::cuda {

// Everything that selects a cuBLASLt algorithm for one row-major GEMM.
struct GemmKey {
  int64_t m = 0, n = 0, k = 0;
  bool trans_a = false, trans_b = false;
  bool bias = false;
  DType ab = DType::f32;  // a and b
  DType c = DType::f32;   // c and bias
  // Alignment in bytes each pointer is known to have (a power of two, at most 16; 0: no bias).
  uint8_t align_a = 0, align_b = 0, align_c = 0, align_bias = 0;
  bool operator==(const GemmKey&) const = default;
};

struct GemmKeyHash {
  size_t operator()(const GemmKey& k) const;
};

// cuBLASLt descriptors for one GemmKey and the algorithm chosen for them (owned, RAII). The layouts
// are cuBLASLt's column-major view: its A is our b, its B is our a, its C (= D) is our c
// transposed.
struct GemmPlan {
  GemmPlan() = default;
  ~GemmPlan();
  GemmPlan(const GemmPlan&) = delete;
  GemmPlan& operator=(const GemmPlan&) = delete;

  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t layout_a = nullptr, layout_b = nullptr, layout_c = nullptr;
  cublasLtMatmulAlgo_t algo{};
  std::mutex bias_mu;  // held from setting the bias pointer in `desc` until the launch is queued
};

// [Note: cuBLASLt workspaces]
// A workspace may be used by one matmul at a time. Matmuls on one stream run in order, but two
// streams could run theirs concurrently, so each stream that runs a GEMM gets its own workspace,
// allocated once from the device's caching allocator on that stream and kept for the process.
class CublasLtHandle {
 public:
  static constexpr size_t kWorkspaceBytes = size_t{32} << 20;

  // The handle of CUDA device `d`, created on first use (thread-safe).
  static CublasLtHandle& for_device(Device d);

  explicit CublasLtHandle(Device d);
  ~CublasLtHandle();
  CublasLtHandle(const CublasLtHandle&) = delete;
  CublasLtHandle& operator=(const CublasLtHandle&) = delete;

  cublasLtHandle_t get() const { return handle_; }
  // kWorkspaceBytes of device memory for matmuls queued on `s`.
  void* workspace(Stream s);
  // The cached plan for `key`, or nullptr.
  GemmPlan* find_plan(const GemmKey& key);
  // Caches `plan` for `key` and returns the cached one (an earlier one if another thread won).
  GemmPlan& add_plan(const GemmKey& key, std::unique_ptr<GemmPlan> plan);

 private:
  Device device_;
  cublasLtHandle_t handle_ = nullptr;
  std::mutex mu_;                                 // guards the two maps
  std::unordered_map<void*, Tensor> workspaces_;  // stream handle -> u8[kWorkspaceBytes]
  std::unordered_map<GemmKey, std::unique_ptr<GemmPlan>, GemmKeyHash> plans_;
};

}  // namespace zt::kernels::cuda
