// host_name and process_exists; see process_info.h.
#include "zerotrain/core/process_info.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>

namespace zt {

std::string host_name() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0 || buf[0] == '\0') return "localhost";
  return buf;
}

bool process_exists(long pid) {
  if (pid <= 0) return false;
  // EPERM: it exists, owned by another user.
  return ::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH;
}

}  // namespace zt
