// The training loop of one run (train() in trainer.h), on top of the set-up every run shares
// (run_setup.h). Its parts, one job each:
// - the constructor: what only training needs (the schedule and the fp16 loss scaler, restored
//   when resuming; the block runner with the memory tracker's hooks; --out created, locked and its
//   space checked; the checkpoint saver and its first buffers; the run log; the fault hooks and
//   the stop signal);
// - optimizer_step(): the task's micro-batches forward and backward, the gradient sync, the global
//   norm and the non-finite check, the clipped update and the schedule;
// - log_interval(), evaluate_after(), save(): what the config asks for after a step;
// - finish(): the last save, the model in Hugging Face layout, the summary's totals.
// Tested through train() by tests/train/ (test_trainer_resume.cpp, test_train_outputs.cpp,
// test_trainer_fp16.cpp, test_faults.cpp) and tests/mpi/.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "zerotrain/checkpoint/checkpoint_saver.h"
#include "zerotrain/monitor/loss_plot.h"
#include "zerotrain/nn/block_runner.h"
#include "zerotrain/optim/scheduler.h"
#include "zerotrain/train/fault_injection.h"
#include "zerotrain/train/fp16_step.h"
#include "zerotrain/train/loss_scaler.h"
#include "zerotrain/train/memory_report.h"
#include "zerotrain/train/out_lock.h"
#include "zerotrain/train/run_log.h"
#include "zerotrain/train/run_setup.h"
#include "zerotrain/train/step_measures.h"
#include "zerotrain/train/stop_signal.h"
#include "zerotrain/train/task.h"
#include "zerotrain/train/wall_clock.h"

namespace zt::train {

class TrainingSession {
 public:
  // `in` and `run` outlive the session. `where` follows the run ("step 3", "save") for the
  // out-of-memory message.
  TrainingSession(const TrainConfig& c, const TrainCallbacks& cb, const Task& task, RunInputs& in,
                  RunModel& run, std::string& where);

  // The steps from the resumed one to c.steps (or to a stop signal), then the end of the run.
  TrainSummary run();

 private:
  // What one optimizer step reports.
  struct StepResult {
    double loss = 0;        // the global batch's mean loss
    double norm = 0;        // the unscaled global gradient norm
    double lr = 0;          // the learning rate the update used
    double loss_scale = 1;  // the scale the step's gradients carried (fp16)
  };
  // The steps since the last log line.
  struct Interval {
    std::vector<double> losses, norms;
    int64_t skipped = 0;
    int64_t tokens = 0;
  };

  StepResult optimizer_step(int64_t step);  // 1-based
  double forward_backward(const std::vector<data::Batch>& batches, int64_t step);
  StepResult update(int64_t step, double loss);
  void record(int64_t step, const StepResult& result);
  void log_interval(int64_t step, const StepResult& result);
  void evaluate_after(int64_t step);
  void save(int64_t done);
  void finish(int64_t end_step);
  checkpoint::SaveTarget open_out_directory();
  void start_summary();

  const TrainConfig& c_;
  const TrainCallbacks& cb_;
  const Task& task_;
  RunInputs& in_;
  RunModel& run_;
  std::string& where_;
  zero::ZeroStage& engine_;
  const bool writer_rank_;                             // the one rank that writes files
  const std::unique_ptr<optim::Scheduler> scheduler_;  // [Note: trainer scheduler]
  std::optional<LossScaler> scaler_;                   // [Note: fp16 step]: f16 runs only
  nn::BlockRunner runner_;
  MemoryTracker memory_;  // [Note: memory report]
  const double flops_per_token_;
  const double peak_flops_;
  std::optional<OutLock> out_lock_;  // the writer's, held until the session ends
  checkpoint::CheckpointSaver saver_;
  TrainSummary sum_;
  RunLog log_;
  WallClockBreakdown wall_;                      // [Note: wall-clock breakdown]
  std::vector<monitor::LossPoint> plot_points_;  // one per step on the writer, for the loss curve
  nn::StepContext ctx_;
  FaultHooks faults_;  // tests only (fault_injection.h)
  // After the set-up, so that it chains to the swap cleanup's handlers ([Note: stop on a signal]).
  std::optional<StopSignal> stop_signal_;
  StepTimer interval_timer_, total_timer_, step_timer_;
  Interval interval_;
  bool logged_ = false;
};

}  // namespace zt::train
