// A forked child process for the swap tests (tests/io/test_swap_*.cpp): it runs a function and
// reports lines back through a pipe, so a test can kill it at a known point (SIGTERM, SIGKILL) or
// check what it saw under restrictions the test process must not take on itself (another user,
// a seccomp filter, a redirected stderr).
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>

namespace zt::test {

class ChildProcess {
 public:
  // Forks; the child runs `body(report_fd)` and exits 0, or writes "exception: <what>" and exits 3.
  explicit ChildProcess(const std::function<void(int report_fd)>& body);
  ~ChildProcess();  // kills (SIGKILL) and reaps a child still running
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  std::string read_line();  // the next line the child reported, "" at end of file
  std::string read_all();   // everything up to end of file
  void kill(int signo);
  int wait();  // waitpid status
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  int read_fd_ = -1;
  bool reaped_ = false;
  std::string pending_;
};

// Writes `line` and a newline to `fd` (in the child).
void report_line(int fd, const std::string& line);

}  // namespace zt::test
