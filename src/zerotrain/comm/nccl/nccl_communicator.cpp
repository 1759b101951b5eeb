// The NCCL backend. See nccl_communicator.h and [Note: NCCL timeout].
#include "zerotrain/comm/nccl/nccl_communicator.h"

#include <cuda_runtime.h>

#include <chrono>
#include <thread>
#include <vector>

#include "zerotrain/comm/nccl/nccl_check.h"
#include "zerotrain/core/cuda/cuda_check.h"

namespace zt::comm {
namespace {

ncclConfig_t nonblocking_config() {
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  return config;
}

}  // namespace

NcclCommunicator::NcclCommunicator(Device device, int rank, int size, const ncclUniqueId& id,
                                   double timeout_s)
    : Communicator(timeout_s), device_(device) {
  if (!device.is_cuda())
    throw DeviceError("comm", str("NCCL needs a CUDA device, got ", to_string(device)));
  std::vector<int> ranks(static_cast<size_t>(size));
  for (int r = 0; r < size; ++r)
    ranks[static_cast<size_t>(r)] = r;
  label_ = "ranks " + describe_ranks(ranks);
  CudaDeviceGuard guard(device_);
  ncclConfig_t config = nonblocking_config();
  ZT_NCCL_CHECK(ncclCommInitRankConfig(&comm_, size, id, rank, &config));
  wait_accepted(comm_, str("NCCL communicator setup on ", label_));
  init_after_create();
}

NcclCommunicator::NcclCommunicator(Device device, ncclComm_t comm, std::string label,
                                   double timeout_s)
    : Communicator(timeout_s), device_(device), comm_(comm), label_(std::move(label)) {
  CudaDeviceGuard guard(device_);
  init_after_create();
}

void NcclCommunicator::init_after_create() {
  ZT_NCCL_CHECK(ncclCommCount(comm_, &size_));
  ZT_NCCL_CHECK(ncclCommUserRank(comm_, &rank_));
  ZT_CUDA_CHECK(cudaMalloc(&barrier_buf_, sizeof(float)));
  cudaStream_t s = nullptr;
  ZT_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  barrier_stream_ = s;
  watchdog_ = std::make_unique<detail::NcclWatchdog>(comm_, device_, timeout_s_);
}

NcclCommunicator::~NcclCommunicator() {
  int previous = -1;  // not CudaDeviceGuard: a destructor must not throw
  cudaGetDevice(&previous);
  cudaSetDevice(device_.index);
  watchdog_.reset();  // every watched collective has finished (or the process is gone)
  if (comm_) {
    // Finalize flushes NCCL's internal work; bounded like any other wait, then destroy.
    ncclResult_t st = ncclCommFinalize(comm_);
    auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s_);
    while (st == ncclInProgress && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::yield();
      ncclCommGetAsyncError(comm_, &st);
    }
    if (st == ncclSuccess)
      ncclCommDestroy(comm_);
    else
      ncclCommAbort(comm_);
  }
  if (barrier_stream_) cudaStreamDestroy(static_cast<cudaStream_t>(barrier_stream_));
  if (barrier_buf_) cudaFree(barrier_buf_);
  if (previous >= 0) cudaSetDevice(previous);
}

std::string NcclCommunicator::describe(const char* what, size_t count, DType dtype) const {
  return str(what, " of ", count, " ", dtype_name(dtype), " on ", label_, " (nccl, ",
             to_string(device_), ")");
}

void NcclCommunicator::check_stream(const char* what, Stream stream) const {
  if (stream.device != device_)
    throw DeviceError("comm", str(what, ": the NCCL communicator lives on ", to_string(device_),
                                  ", got a ", to_string(stream.device), " stream"));
}

void NcclCommunicator::wait_accepted(ncclComm_t comm, const std::string& description) const {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s_);
  ncclResult_t st = ncclInProgress;
  for (;;) {
    ZT_NCCL_CHECK(ncclCommGetAsyncError(comm, &st));
    if (st != ncclInProgress) break;
    if (std::chrono::steady_clock::now() > deadline)
      detail::NcclWatchdog::fail(comm,
                                 str("[comm] ", description, " did not complete in ", timeout_s_,
                                     " s (NCCL still in progress: a peer "
                                     "died, hangs, or skipped the call); aborting"));
    std::this_thread::yield();
  }
  if (st != ncclSuccess)
    throw BackendError("comm", str(description, " failed: ", ncclGetErrorString(st)));
}

void NcclCommunicator::enqueued(Stream stream, const std::string& description) {
  wait_accepted(comm_, description);
  watchdog_->watch(stream, description);
}

void NcclCommunicator::all_reduce(const void* send, void* recv, size_t count, DType dtype,
                                  ReduceOp op, Stream stream) {
  check_reduce_args("all_reduce", dtype, op);
  check_stream("all_reduce", stream);
  CudaDeviceGuard guard(device_);
  ZT_NCCL_CHECK(ncclAllReduce(send, recv, count, detail::to_nccl(dtype), detail::to_nccl(op), comm_,
                              to_cuda(stream)));
  enqueued(stream, describe("all_reduce", count, dtype));
}

void NcclCommunicator::reduce_scatter(const void* send, void* recv, size_t recv_count, DType dtype,
                                      ReduceOp op, Stream stream) {
  check_reduce_args("reduce_scatter", dtype, op);
  check_stream("reduce_scatter", stream);
  CudaDeviceGuard guard(device_);
  ZT_NCCL_CHECK(ncclReduceScatter(send, recv, recv_count, detail::to_nccl(dtype),
                                  detail::to_nccl(op), comm_, to_cuda(stream)));
  enqueued(stream, describe("reduce_scatter", recv_count, dtype));
}

void NcclCommunicator::all_gather(const void* send, void* recv, size_t send_count, DType dtype,
                                  Stream stream) {
  check_stream("all_gather", stream);
  CudaDeviceGuard guard(device_);
  ZT_NCCL_CHECK(
      ncclAllGather(send, recv, send_count, detail::to_nccl(dtype), comm_, to_cuda(stream)));
  enqueued(stream, describe("all_gather", send_count, dtype));
}

void NcclCommunicator::broadcast(void* buffer, size_t count, DType dtype, int root, Stream stream) {
  check_root("broadcast", root, size_);
  check_stream("broadcast", stream);
  CudaDeviceGuard guard(device_);
  ZT_NCCL_CHECK(
      ncclBroadcast(buffer, buffer, count, detail::to_nccl(dtype), root, comm_, to_cuda(stream)));
  enqueued(stream, describe("broadcast", count, dtype));
}

void NcclCommunicator::barrier() {
  CudaDeviceGuard guard(device_);
  auto s = static_cast<cudaStream_t>(barrier_stream_);
  ZT_NCCL_CHECK(ncclAllReduce(barrier_buf_, barrier_buf_, 1, ncclFloat32, ncclSum, comm_, s));
  const std::string description = str("barrier on ", label_, " (nccl, ", to_string(device_), ")");
  wait_accepted(comm_, description);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s_);
  for (;;) {
    cudaError_t q = cudaStreamQuery(s);
    if (q == cudaSuccess) return;
    if (q != cudaErrorNotReady) ZT_CUDA_CHECK(q);
    if (std::chrono::steady_clock::now() > deadline)
      detail::NcclWatchdog::fail(
          comm_, str("[comm] ", description, " did not complete in ", timeout_s_, " s; aborting"));
    std::this_thread::yield();
  }
}

std::unique_ptr<Communicator> NcclCommunicator::split(int color, int key) {
  CudaDeviceGuard guard(device_);
  ncclConfig_t config = nonblocking_config();
  ncclComm_t sub = nullptr;
  ZT_NCCL_CHECK(ncclCommSplit(comm_, color < 0 ? NCCL_SPLIT_NOCOLOR : color, key, &sub, &config));
  const std::string description = str("split of ", label_, " (nccl)");
  wait_accepted(comm_, description);
  if (color < 0 || sub == nullptr) return nullptr;
  wait_accepted(sub, description);
  return std::make_unique<NcclCommunicator>(
      device_, sub, str("color ", color, " of a split of ", label_), timeout_s_);
}

}  // namespace zt::comm
