// The lock a training job holds on its --out directory, so that a second job never writes into
// the same model/ and checkpoint/ (a restart while the first still runs, a second terminal): the
// file <out>/.zerotrain.lock, created exclusively by the writing rank, holds "<pid> <host>" and is
// removed when the job ends, also on errors. A lock whose process no longer runs on this host (a
// job killed with SIGKILL; a zombie nobody reaped counts as gone) is taken over with a warning. Tested by tests/train/test_out_lock.cpp.
#pragma once

#include <filesystem>

namespace zt::train {

class OutLock {
 public:
  // Takes the lock on `out` (an existing directory). Throws IoError "[train] --out <dir> is in
  // use by process <pid> on <host> (<lock file>); ..." when a live job of this host, or any job
  // of another host, holds it.
  static OutLock acquire(const std::filesystem::path& out);

  ~OutLock();  // removes the lock file (only in the process that made it)
  OutLock(OutLock&& other) noexcept;
  OutLock& operator=(OutLock&&) = delete;
  OutLock(const OutLock&) = delete;
  OutLock& operator=(const OutLock&) = delete;

  static constexpr const char* kFileName = ".zerotrain.lock";

 private:
  OutLock(std::filesystem::path file, long owner) : file_(std::move(file)), owner_(owner) {}
  std::filesystem::path file_;
  long owner_ = 0;  // the pid that made it; 0 when moved from
};

}  // namespace zt::train
