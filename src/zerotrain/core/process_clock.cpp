// seconds_since_process_start (see process_clock.h).
#include "zerotrain/core/process_clock.h"

#include <time.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>

namespace zt {

namespace {

// The process's start in seconds after boot: field 22 of /proc/self/stat, counted after the
// command name's closing parenthesis (the name may hold spaces). Negative when unreadable.
double start_after_boot() {
  std::ifstream in("/proc/self/stat");
  std::string line;
  if (!std::getline(in, line)) return -1;
  const size_t close = line.rfind(')');
  if (close == std::string::npos) return -1;
  std::istringstream fields(line.substr(close + 2));  // field 3 onwards
  std::string field;
  for (int i = 3; i < 22; ++i)
    if (!(fields >> field)) return -1;
  unsigned long long ticks = 0;
  if (!(fields >> ticks)) return -1;
  const long hz = ::sysconf(_SC_CLK_TCK);
  return hz > 0 ? static_cast<double>(ticks) / static_cast<double>(hz) : -1;
}

}  // namespace

double seconds_since_process_start() {
  static const double start = start_after_boot();
  static const auto first_call = std::chrono::steady_clock::now();
  timespec now{};
  if (start >= 0 && ::clock_gettime(CLOCK_BOOTTIME, &now) == 0) {
    const double s = static_cast<double>(now.tv_sec) + 1e-9 * static_cast<double>(now.tv_nsec);
    if (s >= start) return s - start;
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - first_call).count();
}

}  // namespace zt
