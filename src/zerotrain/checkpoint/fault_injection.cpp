// See fault_injection.h.
#include "zerotrain/checkpoint/fault_injection.h"

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <mutex>

namespace zt::checkpoint {

namespace {

struct FaultState {
  std::mutex mu;
  long count = 0;
  long kill_at = 0;
  const char* log = nullptr;
  FaultState() {
    if (const char* v = std::getenv("ZT_CHECKPOINT_KILL_AT")) kill_at = std::strtol(v, nullptr, 10);
    log = std::getenv("ZT_CHECKPOINT_FAULT_LOG");
  }
};

}  // namespace

void fault_point(const char* what) {
  static FaultState state;
  if (state.kill_at <= 0 && state.log == nullptr) return;
  std::lock_guard lock(state.mu);
  const long n = ++state.count;
  if (state.log != nullptr) {
    if (std::FILE* f = std::fopen(state.log, "a")) {
      std::fprintf(f, "%ld %s\n", n, what);
      std::fclose(f);
    }
  }
  if (n == state.kill_at) std::raise(SIGKILL);
}

}  // namespace zt::checkpoint
