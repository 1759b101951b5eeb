// Removal of live swap directories at exit and on fatal signals. See [Note: swap cleanup] in
// swap_cleanup.h.
#include "zerotrain/io/swap_cleanup.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "zerotrain/core/error.h"

namespace zt::io::detail {
namespace {

constexpr int kSlots = 64;
constexpr int kFree = 0, kFilling = 1, kLive = 2;

struct Slot {
  std::atomic<int> state{kFree};
  pid_t owner = 0;        // the process that created the directory
  char path[PATH_MAX]{};  // NUL-terminated
};

std::array<Slot, kSlots> g_slots;

constexpr std::array<int, 4> kSignals = {SIGTERM, SIGINT, SIGHUP, SIGABRT};
std::array<struct sigaction, kSignals.size()> g_previous{};
std::array<std::atomic<bool>, kSignals.size()> g_installed{};

void remove_live_directories() noexcept {
  const pid_t self = ::getpid();
  for (Slot& s : g_slots)
    if (s.state.load(std::memory_order_acquire) == kLive && s.owner == self)
      remove_flat_directory(s.path);
}

void on_fatal_signal(int signo) {
  const int saved_errno = errno;
  remove_live_directories();
  for (size_t i = 0; i < kSignals.size(); ++i) {
    if (kSignals[i] != signo) continue;
    ::sigaction(signo, &g_previous[i], nullptr);
    g_installed[i].store(false);
  }
  errno = saved_errno;
  // Blocked while this handler runs: delivered with the previous action as soon as it returns.
  ::raise(signo);
}

void install_handlers() {
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  static bool at_exit = false;
  if (!at_exit) {
    std::atexit(remove_live_directories);
    at_exit = true;
  }
  for (size_t i = 0; i < kSignals.size(); ++i) {
    if (g_installed[i].load()) continue;
    struct sigaction current {};
    ::sigaction(kSignals[i], nullptr, &current);
    if (current.sa_handler == SIG_IGN) continue;
    struct sigaction sa {};
    sa.sa_handler = on_fatal_signal;
    sigemptyset(&sa.sa_mask);
    for (int other : kSignals)
      sigaddset(&sa.sa_mask, other);
    if (::sigaction(kSignals[i], &sa, &g_previous[i]) == 0) g_installed[i].store(true);
  }
}

}  // namespace

int register_swap_directory(const std::string& path) {
  if (path.size() >= PATH_MAX)
    throw ValueError("offload",
                     str("swap directory path ", path, " is longer than ", PATH_MAX - 1, " bytes"));
  install_handlers();
  for (int i = 0; i < kSlots; ++i) {
    int expected = kFree;
    if (!g_slots[i].state.compare_exchange_strong(expected, kFilling)) continue;
    g_slots[i].owner = ::getpid();
    std::memcpy(g_slots[i].path, path.c_str(), path.size() + 1);
    g_slots[i].state.store(kLive, std::memory_order_release);
    return i;
  }
  throw ValueError("offload", str("more than ", kSlots, " swap directories alive at once (", path,
                                  " is one too many)"));
}

void unregister_swap_directory(int slot) noexcept {
  if (slot < 0 || slot >= kSlots) return;
  g_slots[slot].state.store(kFree, std::memory_order_release);
}

void remove_flat_directory(const char* path) noexcept {
  const int fd = ::open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) {
    alignas(8) char buf[4096];
    // Unlinking while listing may skip entries: list again until a pass removes nothing.
    for (int pass = 0; pass < 8; ++pass) {
      bool removed = false;
      ::lseek(fd, 0, SEEK_SET);
      for (;;) {
        const ssize_t n = ::getdents64(fd, buf, sizeof buf);
        if (n <= 0) break;
        for (ssize_t at = 0; at < n;) {
          const auto* e = reinterpret_cast<const struct dirent64*>(buf + at);
          at += e->d_reclen;
          const char* name = e->d_name;
          if (std::strcmp(name, ".") == 0 || std::strcmp(name, "..") == 0) continue;
          if (::unlinkat(fd, name, 0) == 0) removed = true;
        }
      }
      if (!removed) break;
    }
    ::close(fd);
  }
  ::rmdir(path);
}

}  // namespace zt::io::detail
