#include "zerotrain/train/training_session.h"

#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <random>

#include "zerotrain/checkpoint/checkpoint_store.h"
#include "zerotrain/checkpoint/gathered_weights.h"
#include "zerotrain/core/allocator.h"
#include "zerotrain/core/error.h"
#include "zerotrain/core/io_error.h"
#include "zerotrain/core/process_clock.h"
#include "zerotrain/core/profile_range.h"
#include "zerotrain/io/hf_model.h"
#include "zerotrain/kernels/attention.h"
#include "zerotrain/train/checkpoint.h"
#include "zerotrain/train/nonfinite_check.h"
#include "zerotrain/train/step_batches.h"
#include "zerotrain/train/train_scheduler.h"
#include "zerotrain/zero/zero_config.h"

namespace zt::train {

namespace fs = std::filesystem;

namespace {

// --out, created if needed and writable, or one line naming the path and the reason.
void create_out_directory(const fs::path& out) {
  std::error_code ec;
  fs::create_directories(out, ec);
  if (ec)
    throw IoError("train",
                  str("--out ", out.string(), ": cannot create the directory: ", ec.message()));
  if (::access(out.c_str(), W_OK) != 0)
    throw IoError("train", str("--out ", out.string(), ": not writable: ", std::strerror(errno)));
}

// The same id on every rank, different between runs: names this run's saves in progress
// ([Note: checkpoint save protocol]).
std::string make_run_id(zero::ZeroStage& engine, int rank) {
  std::random_device rd;
  const uint64_t mine = rank == 0 ? ((uint64_t{rd()} << 16) ^ rd()) & ((uint64_t{1} << 48) - 1) : 0;
  const auto id = static_cast<uint64_t>(engine.sum_over_ranks(static_cast<double>(mine)));
  char buf[20];
  std::snprintf(buf, sizeof buf, "%012llx", static_cast<unsigned long long>(id));
  return buf;
}

// The loss curve; a failure to draw it is a warning, never a lost checkpoint or model.
void write_plot_or_warn(const fs::path& path, const std::vector<monitor::LossPoint>& points,
                        const std::vector<monitor::EvalMetrics>& evals, const TrainCallbacks& cb) {
  try {
    monitor::write_loss_plot(path, points, evals);
  } catch (const Error& e) {
    cb.warn(str("[train] warning: the loss plot was not written: ", e.what()));
  }
}

// Mean of the finite values, NaN when there are none.
double mean_of(const std::vector<double>& xs) {
  double s = 0;
  int n = 0;
  for (double x : xs)
    if (std::isfinite(x)) {
      s += x;
      ++n;
    }
  return n ? s / n : std::nan("");
}

monitor::MemorySplitGib gib_of(const MemoryReport& r) {
  constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
  auto g = [](int64_t b) { return static_cast<double>(b) / kGiB; };
  return {r.step,     g(r.params),      g(r.grads),      g(r.optimizer),      g(r.activations),
          g(r.other), g(r.host_params), g(r.host_grads), g(r.host_optimizer), g(r.nvme)};
}

std::unique_ptr<optim::Scheduler> restored_scheduler(const TrainConfig& c, const RunInputs& in) {
  std::unique_ptr<optim::Scheduler> scheduler = make_train_scheduler(c);
  if (in.resuming) restore_scheduler(*scheduler, in.resumed.scheduler, in.resumed.step);
  return scheduler;
}

std::optional<LossScaler> restored_loss_scaler(const TrainConfig& c, const RunInputs& in) {
  std::optional<LossScaler> scaler = make_loss_scaler(c);
  if (!in.resuming || !scaler) return scaler;
  if (in.resumed.loss_scaler.is_null())
    throw ValueError("train", str("cannot resume fp16 from ", in.saved->dir().string(),
                                  ": its manifest has no loss scaler state"));
  scaler->load_state(in.resumed.loss_scaler);
  return scaler;
}

nn::RunnerOptions runner_options(const TrainConfig& c) {
  nn::RunnerOptions options;
  options.checkpoint_layers = c.activation_checkpointing;
  return options;
}

}  // namespace

TrainingSession::TrainingSession(const TrainConfig& c, const TrainCallbacks& cb, const Task& task,
                                 RunInputs& in, RunModel& run, std::string& where)
    : c_(c),
      cb_(cb),
      task_(task),
      in_(in),
      run_(run),
      where_(where),
      engine_(*run.engine),
      writer_rank_(in.rank == 0),
      scheduler_(restored_scheduler(c, in)),
      scaler_(restored_loss_scaler(c, in)),
      runner_(run.model->blocks(), runner_options(c)),
      memory_(*run.engine, default_allocator(c.device)),
      flops_per_token_(flops_per_token({in.model.num_non_embedding_params(), in.model.num_layers,
                                        in.model.num_heads, in.model.head_dim, c.data.seq_len})),
      peak_flops_(peak_flops_of(c.device)),
      saver_(open_out_directory()),
      log_(c.paths.out, c.reporting, in.evaluator.has_value(), writer_rank_, in.resumed.step,
           c.data.micro_batch * c.data.grad_accum * in.world),
      wall_(c.reporting.wall_clock_breakdown, run.stream) {
  runner_.set_hooks(memory_.wrap(engine_.hooks()));
  // The first save's page-locked host buffers are made in the background while training starts
  // (swapped NVMe state is left out: listing it would read it from disk).
  const bool swaps = c.zero.offload.optimizer.device == zero::OffloadDevice::nvme ||
                     c.zero.offload.params.device == zero::OffloadDevice::nvme;
  if (c.device.is_cuda() && !swaps && !engine_.shard_is_replica()) {
    checkpoint::ShardPlan plan;
    engine_.save_shard(plan);
    saver_.prepare_buffers(plan.specs());
  }
  start_summary();
  ctx_.device = c.device;
  ctx_.stream = run.stream;
  ctx_.compute_dtype = c.precision.dtype;
  reset_peak_memory(c.device);
  sum_.memory_start = memory_.start();
  sum_.startup_seconds = seconds_since_process_start();
  if (cb.on_memory_start) cb.on_memory_start(sum_.memory_start);
  faults_ = FaultHooks(injected_faults_from_env(), c.test_hooks.inject_overflow_steps);
  stop_signal_.emplace(c.faults.stop_grace_s);
  interval_timer_ = total_timer_ = step_timer_ = StepTimer();
}

// The writer creates and locks --out and checks its space (learnt now rather than at the first
// save, hours in); the other ranks wait, since they write their shards into it too.
checkpoint::SaveTarget TrainingSession::open_out_directory() {
  const fs::path checkpoints = c_.paths.out / checkpoint::kCheckpointsDirName;
  if (writer_rank_) {
    create_out_directory(c_.paths.out);
    out_lock_.emplace(OutLock::acquire(c_.paths.out));
    check_checkpoint_space(checkpoints, checkpoint_bytes(c_, in_.model));
  }
  if (c_.comm) c_.comm->barrier();
  checkpoint::SaveTarget target;
  target.root = checkpoints;
  target.rank = in_.rank;
  target.world = in_.world;
  target.run_id = make_run_id(engine_, in_.rank);
  target.keep = c_.reporting.keep_checkpoints;
  target.async = c_.reporting.async_save;
  return target;
}

void TrainingSession::start_summary() {
  sum_.metrics_path = log_.jsonl_path();
  sum_.csv_path = log_.csv_path();
  sum_.csv_monitor_dir = c_.reporting.csv_monitor_dir;
  sum_.tensorboard_file = log_.tensorboard_file();
  sum_.wandb_run_dir = log_.wandb_run_dir();
  sum_.world_size = in_.world;
  sum_.zero_stage = c_.zero.stage;
  if (zero::hybrid_sharding(c_.zero, in_.world)) sum_.shard_group = c_.zero.zero_hpz_partition_size;
  if (run_.zero_init && run_.values) sum_.zero_init = run_.values->describe();
  sum_.init = in_.resuming
                  ? in_.init_description()
                  : str(in_.source.description,
                        in_.source.weights.empty() ? str(", seed ", c_.data.seed) : std::string());
  sum_.plot_path = c_.paths.out / "loss.png";
  sum_.model_dir = c_.paths.out / "model";
}

TrainSummary TrainingSession::run() {
  int64_t end_step = c_.steps;  // earlier when a stop signal ends the run
  for (int64_t step = in_.resumed.step + 1; step <= c_.steps; ++step) {
    where_ = str("step ", step);
    const ProfileRange step_range(where_);
    const StepResult result = optimizer_step(step);
    record(step, result);
    const bool last = step == c_.steps;
    if (step % c_.reporting.log_every == 0 || last) log_interval(step, result);
    if (in_.evaluator && in_.evaluator->due(step, c_.steps)) evaluate_after(step);
    const bool saved_now = c_.reporting.save_every > 0 && step % c_.reporting.save_every == 0;
    if (saved_now && !last) save(step);
    if (cb_.on_step) cb_.on_step(step, c_.steps, result.loss);
    if (!last && (sum_.stop_signal = stop_signal_->agreed(engine_, in_.world > 1))) {
      if (!saved_now) save(step);
      end_step = sum_.stopped_step = step;
      break;
    }
  }
  finish(end_step);
  return sum_;
}

TrainingSession::StepResult TrainingSession::optimizer_step(int64_t step) {
  memory_.begin_step(step);
  engine_.zero_grad();
  const std::vector<data::Batch> batches = [&] {
    const ProfileRange range("next batches");
    return next_batches(*run_.loader, c_.data.grad_accum);
  }();
  // See [Note: loss normalisation] in nn/head_block.h and [Note: data-parallel step]: the summed
  // gradients are loss_scale x those of the global batch's loss.
  ctx_.num_items_in_batch = task_.loss_targets(batches, engine_);
  double loss = forward_backward(batches, step);
  {
    const ProfileRange range("finish gradient sync");
    engine_.finish_gradient_sync();
  }
  task_.unload(ctx_);
  faults_.after_gradient_sync(step, engine_, run_.stream);
  if (c_.comm) loss = engine_.sum_over_ranks(loss);
  loss = faults_.after_loss(step, loss);
  wall_.lap(Phase::comm);
  return update(step, loss);
}

// Each micro-batch's forward and backward; returns their shares of the global mean loss, summed.
double TrainingSession::forward_backward(const std::vector<data::Batch>& batches, int64_t step) {
  const double loss_scale = scaler_ ? scaler_->scale() : 1.0;
  double loss = 0;
  for (int64_t m = 0; m < c_.data.grad_accum; ++m) {
    engine_.begin_micro_step(m + 1 == c_.data.grad_accum);
    ctx_.loss_scale = micro_loss_scale(loss_scale, m == 0 && faults_.overflows_at(step));
    const data::Batch& batch = batches[static_cast<size_t>(m)];
    task_.load_micro_batch(batch, ctx_);
    wall_.restart();
    const Tensor micro_loss = runner_.forward(ctx_);
    wall_.lap(Phase::forward);
    runner_.backward(ctx_);
    wall_.lap(Phase::backward);
    loss += micro_loss.to_floats(run_.stream)[0];
    interval_.tokens += task_.tokens_of(batch, c_.data.seq_len);
  }
  return loss;
}

// One norm for every stage ([Note: chunked gradient norm]); a non-finite one stops the run or
// skips the step ([Note: non-finite check], [Note: fp16 step]); then the clipped update.
TrainingSession::StepResult TrainingSession::update(int64_t step, double loss) {
  const double grad_norm = engine_.grad_norm();
  stop_on_nonfinite(c_, scaler_.has_value(), step, loss, grad_norm, engine_, run_.stream);
  const StepPlan plan =
      plan_step(grad_norm, c_.clip, scaler_,
                c_.precision.dtype == DType::bf16 && c_.precision.check_grad_overflow);
  StepResult result{loss, plan.norm, scheduler_->lr(), plan.loss_scale};
  if (const auto betas = scheduler_->betas())
    engine_.set_betas(static_cast<float>(betas->beta1), static_cast<float>(betas->beta2));
  if (plan.update) {
    const ProfileRange range("optimizer step");
    engine_.step(static_cast<float>(result.lr), plan.grad_scale);
  }
  if (plan.step_scheduler) scheduler_->step();
  if (!plan.update) {
    ++interval_.skipped;
    ++sum_.skipped_steps;
  }
  synchronize(run_.stream);
  memory_.end_step();
  wall_.lap(Phase::step);
  return result;
}

// The step's share of the summary and of the interval until the next log line.
void TrainingSession::record(int64_t step, const StepResult& result) {
  if (step == in_.resumed.step + 1) {
    const zero::MemoryBytes mem = engine_.memory();
    sum_.param_bytes = mem.params;
    sum_.grad_bytes = mem.grads;
    sum_.optimizer_bytes = mem.optimizer;
  }
  if (c_.comm && c_.check_params_every > 0 && step % c_.check_params_every == 0)
    engine_.check_parameters_identical();
  interval_.losses.push_back(result.loss);
  interval_.norms.push_back(result.norm);
  const int64_t step_tokens = c_.data.micro_batch * c_.data.seq_len * c_.data.grad_accum;
  sum_.tokens += step_tokens;
  const double step_tokens_per_s = tokens_per_second(step_tokens, step_timer_.lap()) * in_.world;
  if (writer_rank_) plot_points_.push_back({step, result.loss, step_tokens_per_s});
}

void TrainingSession::log_interval(int64_t step, const StepResult& result) {
  const double seconds = interval_timer_.lap();
  monitor::StepMetrics r;
  r.step = step;
  r.loss = mean_of(interval_.losses);
  r.lr = result.lr;
  r.grad_norm = mean_of(interval_.norms);
  r.loss_scale = result.loss_scale;
  r.loss_scaling = scaler_.has_value();
  r.skipped = interval_.skipped;
  r.tokens_per_s_per_gpu = tokens_per_second(interval_.tokens, seconds);
  r.tokens_per_s = r.tokens_per_s_per_gpu * in_.world;
  r.world_size = in_.world;
  r.mfu = mfu(r.tokens_per_s_per_gpu, flops_per_token_, peak_flops_);
  if (wall_.enabled()) r.wall_clock = wall_.take(static_cast<int64_t>(interval_.losses.size()));
  const MemorySnapshot mem = memory_snapshot(c_.device);
  r.mem_gib = mem.allocated_gib;
  r.peak_mem_gib = mem.peak_allocated_gib;
  r.reserved_gib = mem.reserved_gib;
  r.memory_peak = gib_of(memory_.peak_report());
  r.host_memory = host_memory_snapshot();
  sum_.peak_mem_gib = std::max(sum_.peak_mem_gib, r.peak_mem_gib);
  if (!logged_) sum_.first_loss = r.loss;
  logged_ = true;
  sum_.last_loss = r.loss;
  log_.write(r);
  if (cb_.on_log) cb_.on_log(r);
  if (writer_rank_ && c_.reporting.plot_every > 0 && step % c_.reporting.plot_every == 0)
    write_plot_or_warn(sum_.plot_path, plot_points_, sum_.evals, cb_);
  interval_ = Interval{};
}

void TrainingSession::evaluate_after(int64_t step) {
  where_ = str("the evaluation after step ", step);
  const monitor::EvalMetrics e =
      in_.evaluator->evaluate(engine_, run_.model->blocks(), ctx_, c_.comm, step);
  for (StepTimer* t : {&interval_timer_, &step_timer_, &total_timer_})
    t->exclude(e.seconds);  // the rates are training's
  sum_.evals.push_back(e);
  sum_.eval_seconds += e.seconds;
  log_.write(e);
  if (cb_.on_eval) cb_.on_eval(e);
}

// Every rank saves its own shard; training waits only for the copy to the host. The loss plot
// comes after, and its failure is a warning: it never costs a checkpoint.
void TrainingSession::save(int64_t done) {
  where_ = "save";
  StepTimer blocked;
  double waited = 0;  // for an earlier save still writing
  checkpoint::RankShard shard = saver_.next_shard(waited);
  if (!engine_.shard_is_replica()) engine_.save_shard(shard);
  TrainState st;
  st.step = done;
  st.data = run_.loader->state();
  st.config = resume_config_json(c_, in_.world);
  st.scheduler = scheduler_->state();
  if (scaler_) st.loss_scaler = scaler_->state();
  checkpoint::GatheredWeights weights;
  if (c_.reporting.checkpoint_weights)
    weights = checkpoint::gather_weights(engine_, in_.model, run_.model->parameters(),
                                         c_.precision.dtype, writer_rank_, run_.stream);
  waited += saver_.save(std::move(shard),
                        checkpoint_header(c_, in_.model, in_.world, engine_.step_count(), st),
                        std::move(weights));
  sum_.checkpoint_last_blocked_s = blocked.lap() - waited;
  sum_.checkpoint_blocked_s += sum_.checkpoint_last_blocked_s;
  sum_.checkpoint_waited_s += waited;
  if (writer_rank_) write_plot_or_warn(sum_.plot_path, plot_points_, sum_.evals, cb_);
}

// The summary's totals; without a stop signal the last save and the model in Hugging Face layout
// (one group gathered at a time: at stage 3 no rank holds the whole model on its device); then
// the wait for the saves still writing.
void TrainingSession::finish(int64_t end_step) {
  sum_.steps = end_step - in_.resumed.step;
  sum_.examples_cut = run_.loader->examples_cut();
  sum_.loss_scale = scaler_ ? scaler_->scale() : 1.0;
  sum_.seconds = total_timer_.lap();
  sum_.tokens_per_s = tokens_per_second(sum_.tokens, sum_.seconds);
  sum_.mfu = mfu(sum_.tokens_per_s, flops_per_token_, peak_flops_);
  sum_.attention = kernels::attention_paths_used();
  sum_.memory_peak = memory_.peak_report();
  if (!sum_.stop_signal) {
    save(c_.steps);
    where_ = "save";
    const checkpoint::GatheredWeights final_weights =
        checkpoint::gather_weights(engine_, in_.model, run_.model->parameters(), c_.precision.dtype,
                                   writer_rank_, run_.stream);
    if (writer_rank_)
      checkpoint::write_weights(final_weights, sum_.model_dir, io::kDefaultMaxShardBytes);
  }
  saver_.wait();
  if (writer_rank_) sum_.checkpoint_dir = saver_.last_saved();
  const checkpoint::CheckpointSaver::Written written = saver_.written();
  sum_.checkpoint_saves = written.saves;
  sum_.checkpoint_bytes = written.bytes;
  sum_.checkpoint_write_s = written.seconds;
  sum_.resume_load_s = run_.resume_load_s;
}

}  // namespace zt::train
