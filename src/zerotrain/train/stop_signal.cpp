// The signal-driven stop of a run; see [Note: stop on a signal] in stop_signal.h.
#include "zerotrain/train/stop_signal.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstring>

#include "zerotrain/core/error.h"

namespace zt::train {

namespace {

volatile sig_atomic_t g_signal = 0;  // the first SIGTERM/SIGINT, 0 before one
unsigned g_grace_s = 0;              // seconds from that signal to the forced exit
std::atomic<bool> g_installed{false};
struct sigaction g_previous_term {}, g_previous_int {}, g_previous_usr2 {}, g_previous_alarm {};

void write_stderr(const char* text) {
  const ssize_t ignored = ::write(STDERR_FILENO, text, std::strlen(text));
  (void)ignored;
}

void on_stop_signal(int signo) {
  if (g_signal != 0) {
    // The second one: the previous action, now (it is blocked until this handler returns).
    ::sigaction(signo,
                signo == SIGTERM  ? &g_previous_term
                : signo == SIGINT ? &g_previous_int
                                  : &g_previous_usr2,
                nullptr);
    write_stderr("[train] second stop signal: exiting without a checkpoint\n");
    ::raise(signo);
    return;
  }
  g_signal = signo;
  ::alarm(g_grace_s);
}

void on_grace_over(int) {
  write_stderr("[train] the stop grace period (--stop-grace) is over: exiting without a checkpoint\n");
  ::_exit(128 + (g_signal != 0 ? g_signal : SIGTERM));
}

}  // namespace

const char* stop_signal_name(int signo) {
  if (signo == SIGTERM) return "SIGTERM";
  if (signo == SIGINT) return "SIGINT";
  if (signo == SIGUSR2) return "SIGUSR2";
  return "signal";
}

StopSignal::StopSignal(double grace_s) {
  if (g_installed.exchange(true))
    throw ValueError("train", "a second StopSignal while one is installed (one run at a time)");
  g_signal = 0;
  g_grace_s = static_cast<unsigned>(std::ceil(std::max(1.0, grace_s)));
  struct sigaction sa {};
  sa.sa_flags = SA_RESTART;  // a system call the signal interrupts goes on
  sigemptyset(&sa.sa_mask);
  sigaddset(&sa.sa_mask, SIGTERM);
  sigaddset(&sa.sa_mask, SIGINT);
  sigaddset(&sa.sa_mask, SIGUSR2);
  sa.sa_handler = on_grace_over;
  ::sigaction(SIGALRM, &sa, &g_previous_alarm);
  sa.sa_handler = on_stop_signal;
  ::sigaction(SIGTERM, &sa, &g_previous_term);
  ::sigaction(SIGINT, &sa, &g_previous_int);
  ::sigaction(SIGUSR2, &sa, &g_previous_usr2);
}

StopSignal::~StopSignal() {
  ::sigaction(SIGTERM, &g_previous_term, nullptr);
  ::sigaction(SIGINT, &g_previous_int, nullptr);
  ::sigaction(SIGUSR2, &g_previous_usr2, nullptr);
  ::alarm(0);
  ::sigaction(SIGALRM, &g_previous_alarm, nullptr);
  g_installed.store(false);
}

int StopSignal::received() const {
  return g_signal;
}

int StopSignal::agreed(zero::ZeroStage& engine, bool many_ranks) const {
  const int mine = g_signal;
  if (!many_ranks) return mine;
  // Counts of each kind in one exact sum: SIGTERMs in the low 20 bits, SIGINTs in the next 20,
  // SIGUSR2s above (exact in a double for up to 2^20 ranks).
  constexpr double kUnit = 1048576.0;
  const double mark = mine == SIGTERM ? 1.0 : mine == SIGINT ? kUnit : mine ? kUnit * kUnit : 0.0;
  const double sum = engine.sum_over_ranks(mark);
  if (std::fmod(sum, kUnit) > 0) return SIGTERM;
  if (std::fmod(sum, kUnit * kUnit) > 0) return SIGINT;
  return sum > 0 ? SIGUSR2 : 0;
}

}  // namespace zt::train
