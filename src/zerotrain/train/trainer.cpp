#include "zerotrain/train/trainer.h"

#include <cmath>
#include <cstdio>
#include <optional>

#include "zerotrain/comm/agreed_checks.h"
#include "zerotrain/core/error.h"
#include "zerotrain/train/out_of_memory.h"
#include "zerotrain/train/run_setup.h"
#include "zerotrain/train/task.h"
#include "zerotrain/train/training_session.h"

namespace zt::train {

namespace {

// --eval-only: one evaluation of the model as set up, without a step or a file written.
TrainSummary evaluate_once(const TrainConfig& c, const TrainCallbacks& cb, RunInputs& in,
                           RunModel& run) {
  nn::StepContext ctx;
  ctx.device = c.device;
  ctx.stream = run.stream;
  ctx.compute_dtype = c.precision.dtype;
  TrainSummary sum;
  sum.world_size = in.world;
  sum.zero_stage = c.zero.stage;
  sum.init = in.init_description();
  sum.evals.push_back(
      in.evaluator->evaluate(*run.engine, run.model->blocks(), ctx, c.comm, in.resumed.step));
  sum.eval_seconds = sum.evals.back().seconds;
  if (cb.on_eval && in.rank == 0) cb.on_eval(sum.evals.back());
  return sum;
}

// The run; `where` follows it ("setup", "step 3", "save") for the out-of-memory message.
TrainSummary run(const TrainConfig& c, const TrainCallbacks& cb, std::string& where) {
  validate_train_config(c);
  const CausalLmTask task;
  // The model's, the evaluation data's and the checkpoint's checks, agreed on by the ranks
  // ([Note: one line per error across ranks] in comm/agreed_checks.h).
  std::optional<RunInputs> inputs;
  comm::agree_on_checks(c.comm, c.device, [&] { inputs.emplace(c, cb); });
  RunInputs& in = *inputs;
  RunModel model(c, cb, in, task);
  if (c.eval.only) return evaluate_once(c, cb, in, model);
  TrainingSession session(c, cb, task, in, model, where);
  return session.run();
}

}  // namespace

void validate_train_config(const TrainConfig& c) {
  validate_data_config(c.data);
  validate_schedule_config(c.schedule);
  validate_precision_config(c.precision, c.optimizer);
  zero::validate_zero_config(c.zero);
  validate_report_config(c.reporting);
  validate_eval_config(c.eval);
  validate_fault_config(c.faults);
  if (c.steps <= 0)
    throw ValueError("config",
                     str("scheduler.params.total_num_steps (--steps): must be > 0, got ", c.steps));
  if (!(c.clip >= 0) || !std::isfinite(c.clip))
    throw ValueError("config",
                     str("gradient_clipping (--clip): must be >= 0 (0: off), got ", c.clip));
  if (c.check_params_every < 0)
    throw ValueError("config",
                     str("--check-params-every: must be >= 0, got ", c.check_params_every));
  for (int64_t s : c.test_hooks.inject_overflow_steps)
    if (s < 1) throw ValueError("config", str("inject_overflow_steps holds ", s, ", not >= 1"));
}

void TrainCallbacks::warn(const std::string& line) const {
  if (on_warning)
    on_warning(line);
  else
    std::fprintf(stderr, "%s\n", line.c_str());
}

TrainSummary train(const TrainConfig& c, const TrainCallbacks& cb) {
  std::string where = "setup";
  try {
    return run(c, cb, where);
  } catch (const OutOfMemoryError& e) {
    if (e.component() != "alloc") throw;     // already the run's message
    throw out_of_memory_error(c, where, e);  // [Note: out of memory]
  }
}

}  // namespace zt::train
