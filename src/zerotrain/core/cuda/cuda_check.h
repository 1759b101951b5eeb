// Checked-call macros for the CUDA runtime and cuBLAS(Lt): a failure throws BackendError naming the
// call, the file and the line. Include only from CUDA-backend sources.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime.h>

#include "zerotrain/core/error.h"
#include "zerotrain/core/stream.h"

namespace zt::detail {
[[noreturn]] void throw_cuda_error(cudaError_t e, const char* call, const char* file, int line);
[[noreturn]] void throw_cublas_error(cublasStatus_t s, const char* call, const char* file,
                                     int line);
}  // namespace zt::detail

#define ZT_CUDA_CHECK(call)                                               \
  do {                                                                    \
    cudaError_t zt_err_ = (call);                                         \
    if (zt_err_ != cudaSuccess)                                           \
      ::zt::detail::throw_cuda_error(zt_err_, #call, __FILE__, __LINE__); \
  } while (0)

#define ZT_CUBLAS_CHECK(call)                                              \
  do {                                                                     \
    cublasStatus_t zt_st_ = (call);                                        \
    if (zt_st_ != CUBLAS_STATUS_SUCCESS)                                   \
      ::zt::detail::throw_cublas_error(zt_st_, #call, __FILE__, __LINE__); \
  } while (0)

// After a kernel launch: reports launch-configuration errors at the launch site.
#define ZT_CUDA_CHECK_LAUNCH() ZT_CUDA_CHECK(cudaGetLastError())

namespace zt {
inline cudaStream_t to_cuda(Stream s) {
  return static_cast<cudaStream_t>(s.handle);
}

// Makes `d` current for the scope and restores the previous device after.
class CudaDeviceGuard {
 public:
  explicit CudaDeviceGuard(Device d);
  ~CudaDeviceGuard();
  CudaDeviceGuard(const CudaDeviceGuard&) = delete;
  CudaDeviceGuard& operator=(const CudaDeviceGuard&) = delete;

 private:
  int prev_ = -1;
};
}  // namespace zt
