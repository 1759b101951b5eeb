// ChildProcess: fork, a report pipe, kill and reap. See child_process.h.
#include "io/child_process.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <exception>
#include <utility>

namespace zt::test {

void report_line(int fd, const std::string& line) {
  const std::string text = line + "\n";
  size_t at = 0;
  while (at < text.size()) {
    const ssize_t n = ::write(fd, text.data() + at, text.size() - at);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    at += static_cast<size_t>(n);
  }
}

ChildProcess::ChildProcess(const std::function<void(int report_fd)>& body) {
  int fds[2];
  if (::pipe(fds) != 0) return;
  std::fflush(nullptr);  // or the child's exit() would write the parent's buffered output again
  pid_ = ::fork();
  if (pid_ == 0) {
    ::close(fds[0]);
    int code = 0;
    try {
      body(fds[1]);
    } catch (const std::exception& e) {
      report_line(fds[1], std::string("exception: ") + e.what());
      code = 3;
    }
    ::close(fds[1]);
    ::_exit(code);
  }
  ::close(fds[1]);
  read_fd_ = fds[0];
}

ChildProcess::~ChildProcess() {
  if (pid_ > 0 && !reaped_) {
    ::kill(pid_, SIGKILL);
    wait();
  }
  if (read_fd_ >= 0) ::close(read_fd_);
}

std::string ChildProcess::read_line() {
  for (;;) {
    const size_t nl = pending_.find('\n');
    if (nl != std::string::npos) {
      std::string line = pending_.substr(0, nl);
      pending_.erase(0, nl + 1);
      return line;
    }
    char buf[4096];
    const ssize_t n = ::read(read_fd_, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return std::exchange(pending_, std::string());
    pending_.append(buf, static_cast<size_t>(n));
  }
}

std::string ChildProcess::read_all() {
  std::string all = std::exchange(pending_, std::string());
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(read_fd_, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return all;
    all.append(buf, static_cast<size_t>(n));
  }
}

void ChildProcess::kill(int signo) {
  if (pid_ > 0) ::kill(pid_, signo);
}

int ChildProcess::wait() {
  int status = 0;
  if (pid_ > 0 && !reaped_) {
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    reaped_ = true;
  }
  return status;
}

}  // namespace zt::test
