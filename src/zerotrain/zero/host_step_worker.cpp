// The host update's thread; see host_step_worker.h.
#include "zerotrain/zero/host_step_worker.h"

#include <utility>

namespace zt::zero {

HostStepWorker::~HostStepWorker() {
  if (thread_.joinable()) thread_.join();
}

void HostStepWorker::start(size_t groups, std::function<void()> update) {
  {
    std::lock_guard lock(mu_);
    stepped_.assign(groups, false);
  }
  thread_ = std::thread([this, groups, update = std::move(update)] {
    try {
      update();
    } catch (...) {
      std::lock_guard lock(mu_);
      error_ = std::current_exception();
      stepped_.assign(groups, true);  // nobody waits forever; drain() rethrows
    }
    stepped_cv_.notify_all();
  });
}

void HostStepWorker::mark_stepped(size_t first, size_t last) {
  {
    std::lock_guard lock(mu_);
    for (size_t i = first; i < last; ++i)
      stepped_[i] = true;
  }
  stepped_cv_.notify_all();
}

void HostStepWorker::wait_stepped(size_t i) {
  if (!thread_.joinable()) return;
  std::unique_lock lock(mu_);
  stepped_cv_.wait(lock, [&] { return bool(stepped_[i]); });
  if (error_) {
    lock.unlock();
    drain();
  }
}

void HostStepWorker::drain() {
  if (thread_.joinable()) thread_.join();
  if (error_) {
    std::exception_ptr e = error_;
    error_ = nullptr;
    std::rethrow_exception(e);
  }
}

}  // namespace zt::zero
