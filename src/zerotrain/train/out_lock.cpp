// OutLock; see out_lock.h.
#include "zerotrain/train/out_lock.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>

#include "zerotrain/core/error.h"
#include "zerotrain/core/io_error.h"
#include "zerotrain/core/json_util.h"
#include "zerotrain/core/process_info.h"

namespace zt::train {

namespace fs = std::filesystem;

namespace {

// A zombie no longer runs: its lock is stale although its pid still exists. That matters where
// nothing reaps orphans (a container whose PID 1 is not an init), which a rank killed under
// mpirun becomes.
bool is_zombie(long pid) {
  std::ifstream stat(str("/proc/", pid, "/stat"));
  const std::string line((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const size_t paren = line.rfind(')');
  return paren != std::string::npos && paren + 2 < line.size() && line[paren + 2] == 'Z';
}

}  // namespace

OutLock OutLock::acquire(const fs::path& out) {
  const fs::path file = out / kFileName;
  const std::string me = str(::getpid(), " ", host_name(), "\n");
  for (int attempt = 0; attempt < 2; ++attempt) {
    const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd >= 0) {
      const ssize_t n = ::write(fd, me.data(), me.size());
      const int err = errno;
      ::close(fd);
      if (n != static_cast<ssize_t>(me.size())) {
        ::unlink(file.c_str());
        errno = n < 0 ? err : ENOSPC;
        throw_errno("train", "--out: cannot write its lock file", file);
      }
      return OutLock(file, ::getpid());
    }
    if (errno != EEXIST) throw_errno("train", "--out: cannot create its lock file", file);
    // Held: by whom?
    std::ifstream in(file);
    long pid = 0;
    std::string host;
    in >> pid >> host;
    if (host == host_name() && pid > 0 && (!process_exists(pid) || is_zombie(pid))) {
      std::fprintf(stderr,
                   "[train] warning: --out %s was locked by process %ld of this host, which no "
                   "longer runs (killed?); taking the lock over\n",
                   out.string().c_str(), pid);
      ::unlink(file.c_str());
      continue;
    }
    throw IoError("train",
                  str("--out ", out.string(), " is in use by process ", pid, " on ",
                      host.empty() ? std::string("an unknown host") : quote_excerpt(host), " (",
                      file.string(),
                      "); wait for that job or stop it, or choose another --out (delete the lock "
                      "file only if that job is gone)"));
  }
  throw IoError("train", str("--out ", out.string(), ": its lock file ", file.string(),
                             " keeps coming back; another job is starting there"));
}

OutLock::~OutLock() {
  if (owner_ != 0 && owner_ == ::getpid()) ::unlink(file_.c_str());
}

OutLock::OutLock(OutLock&& other) noexcept
    : file_(std::move(other.file_)), owner_(other.owner_) {
  other.owner_ = 0;
}

}  // namespace zt::train
