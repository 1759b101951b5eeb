// SwapDirectory: checks of nvme_path, the directory and its README, stale-directory warnings,
// removal. See swap_directory.h.
#include "zerotrain/io/swap_directory.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <random>

#include "zerotrain/core/allocator.h"
#include "zerotrain/core/error.h"
#include "zerotrain/core/io_error.h"
#include "zerotrain/core/process_info.h"
#include "zerotrain/io/swap_cleanup.h"

namespace zt::io {
namespace {

namespace fs = std::filesystem;

// The host name with anything but letters, digits, '.' and '_' replaced by '_', so the directory
// name splits back into host, pid and random part at its last two '-'.
std::string file_safe_host_name() {
  std::string h = host_name();
  for (char& c : h)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_') c = '_';
  return h;
}

std::string random_suffix() {
  std::random_device rd;
  char buf[9];
  std::snprintf(buf, sizeof buf, "%08x", static_cast<unsigned>(rd()));
  return buf;
}

std::string needs(int64_t bytes) {
  return str("; the swap files need ", format_bytes(static_cast<size_t>(bytes)));
}

// One warning per directory under `nvme_path` named like ours, made on this host by a process
// that no longer runs (killed by SIGKILL or a power loss before it could clean up).
void warn_about_stale_directories(const fs::path& nvme_path, const std::string& host) {
  std::error_code ec;
  const std::string prefix = str(SwapDirectory::kNamePrefix, host, "-");
  for (fs::directory_iterator it(nvme_path, fs::directory_options::skip_permission_denied, ec), end;
       !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    const std::string rest = name.substr(prefix.size());  // <pid>-<random>
    const size_t dash = rest.find('-');
    if (dash == std::string::npos || dash == 0) continue;
    char* end_of_pid = nullptr;
    const long pid = std::strtol(rest.c_str(), &end_of_pid, 10);
    if (end_of_pid != rest.c_str() + dash || pid <= 0) continue;
    if (process_exists(pid)) continue;
    std::fprintf(stderr,
                 "[offload] warning: %s holds the swap files of process %ld of this host, which no "
                 "longer runs; zerotrain leaves it alone, delete it to free the space\n",
                 it->path().string().c_str(), pid);
  }
}

void write_readme(const fs::path& dir, const std::string& host) {
  const fs::path path = dir / SwapDirectory::kReadmeName;
  const std::time_t now = std::time(nullptr);
  char when[64] = {};
  std::strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S UTC", std::gmtime(&now));
  const std::string text = str(
      "zerotrain swap directory: the NVMe offload swap files (optimizer state or parameters) of\n"
      "process ",
      ::getpid(), " on host ", host, ", started ", when,
      ".\n\n"
      "This is NOT a checkpoint: the files are scratch space, meaningless once that process ends.\n"
      "zerotrain removes this directory when the run ends (also on errors, SIGTERM and SIGINT).\n"
      "If it is still here, the run was killed (SIGKILL, power loss): delete it.\n");
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) throw_errno("offload", "cannot create", path);
  const ssize_t n = ::write(fd, text.data(), text.size());
  const int err = errno;
  ::close(fd);
  if (n != static_cast<ssize_t>(text.size())) {
    errno = n < 0 ? err : ENOSPC;
    throw_errno("offload", "cannot write", path);
  }
}

}  // namespace

std::optional<SwapPathProblem> swap_path_problem(const std::string& nvme_path,
                                                 int64_t bytes_needed) {
  if (nvme_path.empty()) return SwapPathProblem{"is empty"};
  struct stat st {};
  if (::stat(nvme_path.c_str(), &st) != 0) {
    if (errno == ENOENT) return SwapPathProblem{"does not exist (make the directory first)"};
    return SwapPathProblem{str("cannot be read: ", std::strerror(errno)), true};
  }
  if (!S_ISDIR(st.st_mode)) return SwapPathProblem{"is not a directory"};
  if (::access(nvme_path.c_str(), W_OK | X_OK) != 0)
    return SwapPathProblem{str("is not writable: ", std::strerror(errno)), true};
  struct statvfs vfs {};
  if (::statvfs(nvme_path.c_str(), &vfs) != 0)
    return SwapPathProblem{str("has a free space nobody can tell: ", std::strerror(errno)), true};
  const auto free_bytes = static_cast<int64_t>(vfs.f_bavail) * static_cast<int64_t>(vfs.f_frsize);
  if (free_bytes < bytes_needed)
    return SwapPathProblem{str("has ", format_bytes(static_cast<size_t>(free_bytes)), " free")};
  return std::nullopt;
}

SwapDirectory SwapDirectory::create(const std::string& nvme_path, int64_t bytes_needed) {
  if (const auto problem = swap_path_problem(nvme_path, bytes_needed)) {
    const std::string line = str("nvme_path ", nvme_path, nvme_path.empty() ? "" : " ",
                                 problem->what, needs(bytes_needed));
    if (problem->system) throw IoError("offload", line);
    throw ValueError("offload", line);
  }

  const std::string host = file_safe_host_name();
  warn_about_stale_directories(nvme_path, host);
  for (int attempt = 0;; ++attempt) {
    const fs::path dir =
        fs::path(nvme_path) / str(kNamePrefix, host, "-", ::getpid(), "-", random_suffix());
    if (::mkdir(dir.c_str(), 0700) != 0) {
      if (errno == EEXIST && attempt < 16) continue;
      throw IoError("offload", str("nvme_path ", nvme_path, " is not writable: cannot create ",
                                   dir.filename().string(), ": ", std::strerror(errno),
                                   needs(bytes_needed)));
    }
    SwapDirectory made(dir, detail::register_swap_directory(dir.string()), ::getpid());
    write_readme(dir, host);  // on failure `made` removes the directory again
    return made;
  }
}

SwapDirectory::~SwapDirectory() {
  remove();
}

SwapDirectory::SwapDirectory(SwapDirectory&& other) noexcept
    : path_(std::move(other.path_)), slot_(other.slot_), owner_pid_(other.owner_pid_) {
  other.slot_ = -1;
}

SwapDirectory& SwapDirectory::operator=(SwapDirectory&& other) noexcept {
  if (this != &other) {
    remove();
    path_ = std::move(other.path_);
    slot_ = other.slot_;
    owner_pid_ = other.owner_pid_;
    other.slot_ = -1;
  }
  return *this;
}

fs::path SwapDirectory::file_path(const std::string& name) const {
  if (name.empty() || name == "." || name == ".." || name.find('/') != std::string::npos ||
      name == kReadmeName)
    throw ValueError("offload", str("swap file name \"", name,
                                    "\": expected a plain file name other than ", kReadmeName));
  return path_ / name;
}

void SwapDirectory::remove() noexcept {
  if (slot_ < 0) return;
  if (::getpid() == owner_pid_) detail::remove_flat_directory(path_.c_str());
  detail::unregister_swap_directory(slot_);
  slot_ = -1;
}

}  // namespace zt::io
