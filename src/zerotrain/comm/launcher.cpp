// Child processes with forwarded output and failure propagation. See launcher.h.
#include "zerotrain/comm/launcher.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "zerotrain/core/error.h"

namespace zt::comm {
namespace {

using clock = std::chrono::steady_clock;

volatile sig_atomic_t g_stop_signal = 0;   // the first SIGINT/SIGTERM
volatile sig_atomic_t g_stop_signals = 0;  // how many arrived
void on_stop_signal(int signo) {
  if (g_stop_signal == 0) g_stop_signal = signo;
  g_stop_signals = g_stop_signals + 1;
}

// Installs SIGINT/SIGTERM handlers for the launcher's lifetime and restores the old ones.
class StopSignals {
 public:
  StopSignals() {
    g_stop_signal = 0;
    g_stop_signals = 0;
    struct sigaction sa {};
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int_);
    sigaction(SIGTERM, &sa, &old_term_);
    sigaction(SIGUSR2, &sa, &old_usr2_);
  }
  ~StopSignals() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
    sigaction(SIGUSR2, &old_usr2_, nullptr);
  }

 private:
  struct sigaction old_int_ {
  }, old_term_{}, old_usr2_{};
};

struct Child {
  pid_t pid = -1;
  int out = -1, err = -1;  // read ends of its stdout / stderr pipes
  std::string out_buf, err_buf;
  bool running = true;
};

// The child's environment: this process's, with spec.extra_env on top ("KEY=VALUE" strings).
std::vector<std::string> child_environment(const ChildSpec& spec) {
  EnvMap env = current_env();
  if (!spec.label.empty()) env.insert_or_assign(kRankPrefixEnv, std::string("1"));
  for (const auto& [k, v] : spec.extra_env)
    env[k] = v;
  std::vector<std::string> out;
  for (const auto& [k, v] : env)
    out.push_back(k + "=" + v);
  return out;
}

// Everything the child needs is prepared before fork: between fork and exec only
// async-signal-safe calls (no malloc), since another thread may hold the allocator's lock.
pid_t spawn(const LaunchConfig& cfg, const ChildSpec& spec, int& out_fd, int& err_fd) {
  std::vector<char*> argv;
  for (const std::string& a : cfg.command)
    argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::vector<std::string> env_strings = child_environment(spec);
  std::vector<char*> envp;
  for (std::string& e : env_strings)
    envp.push_back(e.data());
  envp.push_back(nullptr);
  const std::string exec_failed = "[launch] cannot run " + cfg.command[0] + ": ";
  int po[2], pe[2];
  if (::pipe2(po, O_CLOEXEC) != 0 || ::pipe2(pe, O_CLOEXEC) != 0)
    throw BackendError("launch", str("pipe: ", std::strerror(errno)));
  const pid_t launcher = ::getpid();
  pid_t pid = ::fork();
  if (pid < 0) throw BackendError("launch", str("fork: ", std::strerror(errno)));
  if (pid == 0) {
    ::setpgid(0, 0);  // its own process group: stopping it reaches its children too
    // A job dies whole: when the launcher dies, even by SIGKILL, the child gets SIGTERM (a rank
    // cleans up and exits; mpirun stops its ranks). A launcher gone before this line: exit now.
    // The signal follows the thread that forked, which is run_children's caller (the command's
    // main thread).
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != launcher) ::_exit(143);
    ::dup2(po[1], STDOUT_FILENO);
    ::dup2(pe[1], STDERR_FILENO);
    ::execvpe(argv[0], argv.data(), envp.data());
    const char* why = std::strerror(errno);
    ssize_t ignored = ::write(STDERR_FILENO, exec_failed.data(), exec_failed.size());
    ignored = ::write(STDERR_FILENO, why, std::strlen(why));
    ignored = ::write(STDERR_FILENO, "\n", 1);
    (void)ignored;
    ::_exit(127);
  }
  ::setpgid(pid, pid);  // also here, so a signal sent right away reaches the group
  ::close(po[1]);
  ::close(pe[1]);
  out_fd = po[0];
  err_fd = pe[0];
  return pid;
}

void emit(const LaunchConfig& cfg, const ChildSpec& spec, const std::string& line, bool is_err) {
  std::string text = spec.label.empty() ? line : "[" + spec.label + "] " + line;
  if (cfg.sink) return cfg.sink(text, is_err);
  std::FILE* f = is_err ? stderr : stdout;
  std::fputs(text.c_str(), f);
  std::fputc('\n', f);
  std::fflush(f);
}

// Reads what is available on fd; emits complete lines; closes fd at EOF (sets it to -1).
void drain(const LaunchConfig& cfg, const ChildSpec& spec, int& fd, std::string& buf, bool is_err) {
  char chunk[4096];
  ssize_t k = ::read(fd, chunk, sizeof(chunk));
  if (k < 0 && (errno == EINTR || errno == EAGAIN)) return;
  if (k > 0) buf.append(chunk, static_cast<size_t>(k));
  for (size_t nl; (nl = buf.find('\n')) != std::string::npos; buf.erase(0, nl + 1))
    emit(cfg, spec, buf.substr(0, nl), is_err);
  if (k <= 0) {
    if (!buf.empty()) emit(cfg, spec, buf, is_err);  // a last line without newline
    buf.clear();
    ::close(fd);
    fd = -1;
  }
}

std::string describe_status(int status, int& code) {
  if (WIFEXITED(status)) {
    code = WEXITSTATUS(status);
    return str("exited with code ", code);
  }
  int sig = WTERMSIG(status);
  code = 128 + sig;
  return "killed by signal " + signal_name(sig);
}

}  // namespace

std::string signal_name(int signo) {
  switch (signo) {
    case SIGHUP:
      return "SIGHUP";
    case SIGINT:
      return "SIGINT";
    case SIGQUIT:
      return "SIGQUIT";
    case SIGILL:
      return "SIGILL";
    case SIGABRT:
      return "SIGABRT";
    case SIGBUS:
      return "SIGBUS";
    case SIGFPE:
      return "SIGFPE";
    case SIGKILL:
      return "SIGKILL";
    case SIGSEGV:
      return "SIGSEGV";
    case SIGPIPE:
      return "SIGPIPE";
    case SIGTERM:
      return "SIGTERM";
    case SIGUSR2:
      return "SIGUSR2";
    default:
      return str("signal ", signo);
  }
}

EnvMap rank_env(const RankPlace& p) {
  EnvMap env;
  env["RANK"] = std::to_string(p.rank);
  env["WORLD_SIZE"] = std::to_string(p.world);
  env["LOCAL_RANK"] = std::to_string(p.local_rank);
  env["LOCAL_WORLD_SIZE"] = std::to_string(p.local_world);
  env["MASTER_ADDR"] = p.master_addr;
  env["MASTER_PORT"] = std::to_string(p.port);
  return env;
}

EnvMap local_rank_env(int rank, int world, int port) {
  RankPlace p;
  p.rank = p.local_rank = rank;
  p.world = p.local_world = world;
  p.port = port;
  return rank_env(p);
}

LaunchOutcome run_children(const LaunchConfig& cfg) {
  if (cfg.command.empty())
    throw ValueError("launch", "no command to run (expected -- COMMAND ...)");
  if (cfg.children.empty()) throw ValueError("launch", "no processes to start");
  StopSignals stop_signals;
  std::vector<Child> kids(cfg.children.size());
  for (size_t i = 0; i < kids.size(); ++i)
    kids[i].pid = spawn(cfg, cfg.children[i], kids[i].out, kids[i].err);

  LaunchOutcome outcome;
  bool stopping = false;
  bool term_after_grace = false;
  clock::time_point kill_at{};
  // SIGTERM to every running child, SIGKILL `grace_s` later; with sig = SIGKILL at once.
  auto stop_others = [&](double grace_s, int sig) {
    if (stopping && sig != SIGKILL) return;
    // A stop forwarded as another signal (to mpirun): SIGTERM when the grace is over, SIGKILL
    // cfg.grace_s after that.
    term_after_grace = sig != SIGTERM && sig != SIGKILL;
    stopping = true;
    kill_at = clock::now() +
              std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(grace_s));
    for (Child& c : kids)
      if (c.running) ::kill(-c.pid, sig);
  };

  for (;;) {
    std::vector<pollfd> fds;
    std::vector<std::pair<size_t, bool>> who;  // (child, is_stderr) per pollfd
    for (size_t i = 0; i < kids.size(); ++i) {
      if (kids[i].out >= 0) fds.push_back({kids[i].out, POLLIN, 0}), who.emplace_back(i, false);
      if (kids[i].err >= 0) fds.push_back({kids[i].err, POLLIN, 0}), who.emplace_back(i, true);
    }
    bool any_running = false;
    for (const Child& c : kids)
      any_running |= c.running;
    if (fds.empty() && !any_running) break;
    int rc = ::poll(fds.data(), fds.size(), 50);
    for (size_t j = 0; rc > 0 && j < fds.size(); ++j) {
      if (!(fds[j].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      auto [i, is_err] = who[j];
      Child& c = kids[i];
      drain(cfg, cfg.children[i], is_err ? c.err : c.out, is_err ? c.err_buf : c.out_buf, is_err);
    }
    for (size_t i = 0; i < kids.size(); ++i) {
      Child& c = kids[i];
      if (!c.running) continue;
      int status = 0;
      if (::waitpid(c.pid, &status, WNOHANG) != c.pid) continue;
      c.running = false;
      int code = 0;
      std::string why = describe_status(status, code);
      if (code != 0 && !stopping) {
        outcome = {code, static_cast<int>(i), why};
        stop_others(cfg.grace_s, SIGTERM);
      }
    }
    // Signalled: the children get stop_grace_s to stop cleanly ([Note: stop on a signal] in
    // train/stop_signal.h); a second signal kills them now.
    if (g_stop_signal && !stopping) {
      outcome = {128 + g_stop_signal, -1, "launcher got " + signal_name(g_stop_signal)};
      stop_others(cfg.stop_grace_s, cfg.forward_stop_as);
    }
    if (cfg.second_signal_kills && g_stop_signals > 1 && outcome.failed_child < 0 &&
        clock::now() < kill_at)
      stop_others(0, SIGKILL);
    if (stopping && clock::now() > kill_at) {
      for (Child& c : kids)
        if (c.running) ::kill(-c.pid, term_after_grace ? SIGTERM : SIGKILL);
      if (term_after_grace)
        kill_at = clock::now() + std::chrono::duration_cast<clock::duration>(
                                     std::chrono::duration<double>(cfg.grace_s));
      term_after_grace = false;
    }
    // Children gone but pipes still open (a grandchild holds them): stop them too.
    if (!any_running && stopping)
      for (Child& c : kids)
        ::kill(-c.pid, SIGKILL);
  }
  return outcome;
}

}  // namespace zt::comm
