// Stopping a run cleanly on SIGTERM, SIGINT or SIGUSR2, every rank at the same step. Used by trainer.cpp;
// tested by tests/train/test_faults.cpp and tests/faults/fault_harness.py (SIGTERM to one
// process, to every rank under `zerotrain launch` / `train --nproc`, and under mpirun).
//
// [Note: stop on a signal]
// A job scheduler (SLURM, Kubernetes) ends a job with SIGTERM and, some time later, SIGKILL; a
// user presses Ctrl-C. Losing every step since the last checkpoint to that is avoidable:
// - the handler only records the signal (and arms the grace timer, below);
// - at the end of every step the ranks agree on it with one collective on a scalar (any rank's
//   signal stops all: mpirun or a launcher may deliver it to some ranks before others, and a rank
//   that stopped alone would leave the others waiting in the next collective);
// - the run then saves a checkpoint of that step (unless the step just saved one), waits for any
//   background save, does not write model/ (the run did not finish), and train() returns with
//   TrainSummary::stop_signal set; `zerotrain train` prints one line naming the signal, the step
//   and the checkpoint, and exits with 128 + the signal number (143 for SIGTERM, 130 for SIGINT),
//   the code a process killed by that signal would report;
// - SIGUSR2 does the same (exit 140): mpirun forwards it to the ranks at once, while it holds a
//   SIGTERM back for odls_base_sigkill_timeout seconds and then kills the ranks that long after
//   (`kill -USR2 <mpirun>`, or `mpirun --mca odls_base_sigkill_timeout 300` for SIGTERM);
//   `zerotrain launch --mpi` and `train --nproc` on the CPU pass a stop on as SIGUSR2 for that;
// - a second SIGTERM/SIGINT kills the process at once, without saving, through the signal's
//   previous action (the swap-directory cleanup of io/swap_cleanup.h, or the default);
// - so does the grace timer: FaultConfig::stop_grace_s (--stop-grace) after the first signal the
//   process exits with 128 + that signal's number, saved or not (a collective stuck on a lost
//   peer must not keep the job alive past the scheduler's patience).
// A checkpoint is written whole or not at all ([Note: checkpoint save protocol]), so a kill during
// the stopping save leaves `latest` on the previous complete checkpoint.
#pragma once

#include "zerotrain/zero/zero_stage.h"

namespace zt::train {

// Installs the SIGTERM/SIGINT/SIGUSR2 handlers for its lifetime and puts the previous actions back in its
// destructor (also cancelling the grace timer). One at a time per process.
class StopSignal {
 public:
  explicit StopSignal(double grace_s);
  ~StopSignal();
  StopSignal(const StopSignal&) = delete;
  StopSignal& operator=(const StopSignal&) = delete;

  // The signal this process got (SIGTERM, SIGINT or SIGUSR2), 0 while none.
  int received() const;
  // Collective over the engine's ranks when `many_ranks`: the signal any rank got, the same on
  // every rank (SIGTERM before SIGINT before SIGUSR2 when ranks got different ones), 0 while
  // none did.
  int agreed(zero::ZeroStage& engine, bool many_ranks) const;
};

// "SIGTERM", "SIGINT", "SIGUSR2" (the names of the signals a run stops on; "signal N" for others).
const char* stop_signal_name(int signo);

}  // namespace zt::train
