// The watchdog of one NCCL communicator: a thread that watches every enqueued collective (an event
// recorded after it on its stream) and aborts the communicator and the process when one does not
// finish within the timeout or NCCL reports an asynchronous error. See [Note: NCCL timeout].
// Covered on GPUs by tests/mpi/test_nccl_communicator.cpp.
#pragma once

#include <nccl.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <string>
#include <thread>

#include "zerotrain/core/device.h"
#include "zerotrain/core/stream.h"

namespace zt::comm::detail {

// [Note: NCCL timeout]
// The NCCL communicator is created nonblocking (config.blocking = 0), so no NCCL call blocks the
// host: an enqueue that returns ncclInProgress is polled with ncclCommGetAsyncError against the
// deadline. Completion is asynchronous (speed first: the host never waits for a collective), so a
// watchdog thread polls an event recorded after each collective. When a collective has not
// finished after the timeout, or NCCL reports an error, the watchdog prints
//   [comm] all_reduce of 4096 f32 on ranks 0-3 (nccl, cuda:2) did not complete in 30 s (...)
// calls ncclCommAbort (which releases the GPU work stuck in the collective) and ends the process
// with exit code 1; the launcher (mpirun, srun, zerotrain launch) then stops the other ranks.
class NcclWatchdog {
 public:
  NcclWatchdog(ncclComm_t comm, Device device, double timeout_s);
  ~NcclWatchdog();  // waits (within the timeout) for the collectives still in flight
  NcclWatchdog(const NcclWatchdog&) = delete;
  NcclWatchdog& operator=(const NcclWatchdog&) = delete;

  // Records an event on `stream` after the collective just enqueued and watches it.
  void watch(Stream stream, std::string description);

  // Prints the timeout/error line, aborts the communicator and exits(1). Never returns.
  [[noreturn]] static void fail(ncclComm_t comm, const std::string& line);

 private:
  struct Pending {
    void* event;  // cudaEvent_t
    std::string description;
    std::chrono::steady_clock::time_point deadline;
  };
  void run();

  ncclComm_t comm_;
  Device device_;
  double timeout_s_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Pending> pending_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace zt::comm::detail
