// The NCCL watchdog thread. See [Note: NCCL timeout] in nccl_watchdog.h.
#include "zerotrain/comm/nccl/nccl_watchdog.h"

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#include "zerotrain/core/cuda/cuda_check.h"
#include "zerotrain/core/error.h"

namespace zt::comm::detail {

NcclWatchdog::NcclWatchdog(ncclComm_t comm, Device device, double timeout_s)
    : comm_(comm), device_(device), timeout_s_(timeout_s), thread_([this] { run(); }) {}

NcclWatchdog::~NcclWatchdog() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void NcclWatchdog::watch(Stream stream, std::string description) {
  cudaEvent_t e = nullptr;
  ZT_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  ZT_CUDA_CHECK(cudaEventRecord(e, to_cuda(stream)));
  auto deadline = std::chrono::steady_clock::now() +
                  std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                      std::chrono::duration<double>(timeout_s_));
  {
    std::lock_guard<std::mutex> lock(mu_);
    pending_.push_back({e, std::move(description), deadline});
  }
  cv_.notify_all();
}

void NcclWatchdog::fail(ncclComm_t comm, const std::string& line) {
  std::fprintf(stderr, "%s\n", line.c_str());
  std::fflush(stderr);
  ncclCommAbort(comm);
  std::_Exit(1);
}

void NcclWatchdog::run() {
  cudaSetDevice(device_.index);
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    if (pending_.empty()) {
      if (stop_) return;
      cv_.wait(lock, [this] { return stop_ || !pending_.empty(); });
      continue;
    }
    Pending p = pending_.front();
    lock.unlock();
    cudaError_t q = cudaEventQuery(static_cast<cudaEvent_t>(p.event));
    ncclResult_t async = ncclSuccess;
    ncclCommGetAsyncError(comm_, &async);
    if (async != ncclSuccess && async != ncclInProgress)
      fail(comm_, str("[comm] ", p.description, " failed: NCCL reports ", ncclGetErrorString(async),
                      "; aborting"));
    if (q != cudaSuccess && q != cudaErrorNotReady)
      fail(comm_, str("[comm] ", p.description, " failed: CUDA reports ", cudaGetErrorString(q),
                      "; aborting"));
    if (q == cudaErrorNotReady && std::chrono::steady_clock::now() > p.deadline)
      fail(comm_, str("[comm] ", p.description, " did not complete in ", timeout_s_,
                      " s (its GPU work has not finished: a peer died, hangs, or skipped the "
                      "call); aborting"));
    lock.lock();
    if (q == cudaSuccess) {
      cudaEventDestroy(static_cast<cudaEvent_t>(p.event));
      pending_.pop_front();
    } else {
      cv_.wait_for(lock, std::chrono::milliseconds(5));
    }
  }
}

}  // namespace zt::comm::detail
