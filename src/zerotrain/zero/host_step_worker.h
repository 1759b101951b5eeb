// The thread that runs a step's host update after step() returns ([Note: optimizer offload] in
// shard_optimizer.h): which host groups it has stepped so far, so a caller can wait for one
// group, and the error it ended with, rethrown by the next call that waits for it. Tested by
// tests/zero/test_shard_optimizer.cpp.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace zt::zero {

class HostStepWorker {
 public:
  HostStepWorker() = default;
  ~HostStepWorker();  // joins; an error of its update is lost with the engine
  HostStepWorker(const HostStepWorker&) = delete;
  HostStepWorker& operator=(const HostStepWorker&) = delete;

  // Runs `update` on a new thread over `groups` host groups, none stepped yet; update calls
  // mark_stepped as it goes. Call drain() first.
  void start(size_t groups, std::function<void()> update);
  // From the update: host groups [first, last) are stepped.
  void mark_stepped(size_t first, size_t last);
  // Blocks until host group i is stepped (no-op without an update in flight); rethrows the
  // update's error.
  void wait_stepped(size_t i);
  // Blocks until the update is done; rethrows its error.
  void drain();

 private:
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable stepped_cv_;
  std::vector<bool> stepped_;  // under mu_
  std::exception_ptr error_;
};

}  // namespace zt::zero
