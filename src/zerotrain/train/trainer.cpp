#include "zerotrain/train/trainer.h"

#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <memory>
#include <optional>
#include <random>
#include <vector>

#include "zerotrain/checkpoint/checkpoint_reader.h"
#include "zerotrain/checkpoint/checkpoint_saver.h"
#include "zerotrain/checkpoint/checkpoint_store.h"
#include "zerotrain/core/allocator.h"
#include "zerotrain/core/error.h"
#include "zerotrain/core/io_error.h"
#include "zerotrain/core/process_clock.h"
#include "zerotrain/core/profile_range.h"
#include "zerotrain/core/stream.h"
#include "zerotrain/data/data_loader.h"
#include "zerotrain/io/hf_config.h"
#include "zerotrain/io/hf_model.h"
#include "zerotrain/io/model_source.h"
#include "zerotrain/kernels/attention.h"
#include "zerotrain/monitor/loss_plot.h"
#include "zerotrain/nn/block_runner.h"
#include "zerotrain/nn/transformer.h"
#include "zerotrain/optim/precision_guard.h"
#include "zerotrain/train/checkpoint.h"
#include "zerotrain/train/evaluation.h"
#include "zerotrain/train/fault_injection.h"
#include "zerotrain/train/fp16_step.h"
#include "zerotrain/train/memory_report.h"
#include "zerotrain/train/model_fit.h"
#include "zerotrain/train/nonfinite_check.h"
#include "zerotrain/train/out_lock.h"
#include "zerotrain/train/out_of_memory.h"
#include "zerotrain/train/run_log.h"
#include "zerotrain/train/step_batches.h"
#include "zerotrain/train/step_measures.h"
#include "zerotrain/train/stop_signal.h"
#include "zerotrain/train/token_data.h"
#include "zerotrain/train/train_scheduler.h"
#include "zerotrain/train/wall_clock.h"
#include "zerotrain/zero/shard_init.h"
#include "zerotrain/zero/zero_stage.h"

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

// Rank 0's warning line: to the callback, or stderr without one.
void warn(const TrainCallbacks& cb, const std::string& line) {
  if (cb.on_warning)
    cb.on_warning(line);
  else
    std::fprintf(stderr, "%s\n", line.c_str());
}

// The loss curve; a failure to draw it is a warning, never a lost checkpoint or model.
void write_plot_or_warn(const fs::path& path, const std::vector<monitor::LossPoint>& points,
                        const std::vector<monitor::EvalMetrics>& evals, const TrainCallbacks& cb) {
  try {
    monitor::write_loss_plot(path, points, evals);
  } catch (const Error& e) {
    warn(cb, str("[train] warning: the loss plot was not written: ", e.what()));
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

// --eval-only: one evaluation of the model as set up, without a step or a file written.
TrainSummary evaluate_once(Evaluator& evaluator, zero::ZeroStage& engine, nn::Transformer& model,
                           const TrainConfig& c, const TrainCallbacks& cb, Stream stream,
                           int64_t step, const std::string& init) {
  nn::StepContext ctx;
  ctx.device = c.device;
  ctx.stream = stream;
  ctx.compute_dtype = c.precision.dtype;
  TrainSummary sum;
  sum.world_size = c.comm ? c.comm->size() : 1;
  sum.zero_stage = c.zero.stage;
  sum.init = init;
  sum.evals.push_back(evaluator.evaluate(engine, model.blocks(), ctx, c.comm, step));
  sum.eval_seconds = sum.evals.back().seconds;
  if (cb.on_eval && (!c.comm || c.comm->rank() == 0)) cb.on_eval(sum.evals.back());
  return sum;
}

// The run; `where` follows it ("setup", "step 3", "save") for the out-of-memory message.
TrainSummary run(const TrainConfig& c, const TrainCallbacks& cb, std::string& where) {
  validate_train_config(c);
  const bool resuming = !c.paths.resume.empty();
  // A resumed run reads its weights from the checkpoint; otherwise the source is decided once.
  const io::ModelSource source =
      io::resolve_model_source(c.paths.model, resuming ? io::ModelInit::random : c.paths.init);
  const nn::ModelConfig mc = io::read_hf_config(source.config);
  // gpt2's learned positions end there; RoPE models were not trained past it either.
  if (c.data.seq_len > mc.max_position_embeddings)
    throw ValueError("train", str("seq_len ", c.data.seq_len, " (--seq-len) exceeds the model's ",
                                  io::hf_config_key(mc.family, "max_position_embeddings"), " ",
                                  mc.max_position_embeddings));
  check_model_fits_machine(c, mc, c.comm ? c.comm->size() : 1);

  const int world = c.comm ? c.comm->size() : 1;
  const int rank = c.comm ? c.comm->rank() : 0;
  // The held-out file is checked before anything is built ([Note: evaluation]).
  std::optional<Evaluator> evaluator;
  if (c.eval.enabled()) evaluator.emplace(c.eval, c.data, mc, rank, world);
  if (evaluator && rank == 0 && cb.on_eval_set) cb.on_eval_set(evaluator->describe());
  // The checkpoint a resume reads: every rank reads its own shard from it, whatever the world
  // size and stage that saved it.
  std::optional<checkpoint::CheckpointReader> saved;
  TrainState resumed;  // step 0 and the start of the data when not resuming
  if (resuming) {
    std::string note;
    const fs::path dir = checkpoint::resolve_checkpoint(c.paths.resume, &note);
    if (!note.empty() && rank == 0) warn(cb, str("[train] warning: ", note));
    saved.emplace(dir);
    if (c.eval.only)
      check_checkpoint_model(saved->manifest(), c, mc, dir);
    else
      check_resume(saved->manifest(), c, mc, world, dir);
    resumed = train_state_of(saved->manifest(), dir);
  }

  nn::TransformerOptions mo;
  mo.param_dtype = c.precision.dtype;
  mo.grad_dtype = c.precision.grad_accum_dtype;
  mo.device = c.device;
  mo.allocate_grads = false;  // the ZeRO stage's buffers hold the gradients
  // zero.Init: the model gets no values; the stage-3 engine builds only this rank's shards (from
  // the checkpoint when resuming). Stages 0-2 generate a seeded init straight into their group
  // buffers, the model getting no values either ([Note: values built in place] in
  // zero/shard_init.h).
  const bool zero_init = c.zero.stage == 3 && c.zero.zero_init;
  const bool seeded_in_place = c.zero.stage < 3 && !resuming && source.weights.empty();
  mo.allocate = !zero_init && !seeded_in_place;
  nn::Transformer model(mc, mo);
  const Stream stream = c.device.is_cuda() ? Stream::default_for(c.device) : Stream{};
  std::unique_ptr<zero::ShardSource> value_source;
  if (resuming) {
    // Values and optimizer state come from the shards (ZeroStage::load_shard below).
    if (zero_init)
      value_source = std::make_unique<zero::SavedShardSource>(
          *saved, str("the checkpoint ", saved->dir().string()));
  } else if (zero_init) {
    if (!source.weights.empty())
      value_source =
          std::make_unique<zero::PretrainedSource>(mc, model.parameters(), source.weights);
    else
      value_source = std::make_unique<zero::SeededInitSource>(mc, c.data.seed);
  } else if (seeded_in_place) {
    value_source = std::make_unique<zero::SeededInitSource>(mc, c.data.seed);
  } else if (!source.weights.empty()) {
    io::load_pretrained(model, source.weights, stream);
  } else {
    model.init_random(c.data.seed);
  }

  std::optional<data::DataLoader> loader;  // none with --eval-only
  if (!c.eval.only) {
    auto tokens = open_token_file_for_model(c.paths.data, mc, "token file");
    data::DataLoaderConfig dc;
    dc.seq_len = c.data.seq_len;
    dc.micro_batch = c.data.micro_batch;
    dc.seed = c.data.seed;
    dc.rank = rank;
    dc.world = world;
    dc.packing = c.data.packing;
    loader.emplace(tokens, dc, resumed.data);
    if (loader->steps_per_epoch() == 0)
      throw ValueError("train", str("token file ", c.paths.data.string(), " (", tokens->size(),
                                    " tokens) is too small for one batch of ", c.data.micro_batch,
                                    " x ", c.data.seq_len + 1, " tokens"));
  }

  // The ZeRO stage, chosen once, with the optimizer it steps; one process runs it with a one-rank
  // communicator. A resume then reads this rank's shard of the checkpoint into it.
  zero::ZeroOptions zo;
  zo.config = c.zero;
  zo.grad_dtype = c.precision.grad_accum_dtype;
  zo.comm_dtype = c.precision.comm_dtype;
  zo.initial_values = value_source.get();
  zo.initial_values_dtype = c.precision.dtype;
  zo.optimizer.config = c.optimizer;
  zo.optimizer.precision = c.precision.mode;
  if (rank == 0) zo.optimizer.guard = optim::make_precision_guard(cb.on_warning);
  const zero::ZeroContext zero_context = c.comm ? zero::ZeroContext(*c.comm, c.device, stream)
                                                : zero::ZeroContext::one_process(c.device, stream);
  const std::unique_ptr<zero::ZeroStage> engine =
      zero::make_zero_stage(zo, model.blocks(), zero_context);
  double resume_load_s = 0;
  if (saved) {
    StepTimer load_timer;
    engine->load_shard(*saved);
    resume_load_s = load_timer.lap();
  }
  if (c.comm) engine->check_parameters_identical();
  if (c.eval.only)
    return evaluate_once(
        *evaluator, *engine, model, c, cb, stream, resumed.step,
        resuming ? str("the checkpoint ", saved->dir().string()) : source.description);
  // See [Note: trainer scheduler].
  const std::unique_ptr<optim::Scheduler> scheduler = make_train_scheduler(c);
  if (resuming) restore_scheduler(*scheduler, resumed.scheduler, resumed.step);
  // See [Note: fp16 step]: f16 runs only.
  std::optional<LossScaler> scaler = make_loss_scaler(c);
  if (resuming && scaler) {
    if (resumed.loss_scaler.is_null())
      throw ValueError("train", str("cannot resume fp16 from ", saved->dir().string(),
                                    ": its manifest has no loss scaler state"));
    scaler->load_state(resumed.loss_scaler);
  }
  nn::RunnerOptions ro;
  ro.checkpoint_layers = c.activation_checkpointing;
  nn::BlockRunner runner(model.blocks(), ro);
  MemoryTracker memory(*engine, default_allocator(c.device));  // [Note: memory report]
  runner.set_hooks(memory.wrap(engine->hooks()));

  const double per_token = flops_per_token(
      {mc.num_non_embedding_params(), mc.num_layers, mc.num_heads, mc.head_dim, c.data.seq_len});
  const double peak = peak_flops_of(c.device);

  const bool writer_rank = rank == 0;  // the one rank that writes files
  std::optional<OutLock> out_lock;  // held until train() returns or throws
  const fs::path checkpoints = c.paths.out / checkpoint::kCheckpointsDirName;
  if (writer_rank) {
    create_out_directory(c.paths.out);
    out_lock.emplace(OutLock::acquire(c.paths.out));
    // Learnt now rather than at the first save, hours in.
    check_checkpoint_space(checkpoints, checkpoint_bytes(c, mc));
  }
  if (c.comm) c.comm->barrier();  // the other ranks write their shards into --out too
  checkpoint::SaveTarget target;
  target.root = checkpoints;
  target.rank = rank;
  target.world = world;
  target.run_id = make_run_id(*engine, rank);
  target.keep = c.reporting.keep_checkpoints;
  target.async = c.reporting.async_save;
  checkpoint::CheckpointSaver saver(target);
  // The first save's page-locked host buffers are made in the background while training starts
  // (swapped NVMe state is left out: listing it would read it from disk).
  const bool swaps = c.zero.offload.optimizer.device == zero::OffloadDevice::nvme ||
                     c.zero.offload.params.device == zero::OffloadDevice::nvme;
  if (c.device.is_cuda() && !swaps && !engine->shard_is_replica()) {
    checkpoint::ShardPlan plan;
    engine->save_shard(plan);
    saver.prepare_buffers(plan.specs());
  }
  TrainSummary sum;
  RunLog log(c.paths.out, c.reporting, evaluator.has_value(), writer_rank, resumed.step,
             c.data.micro_batch * c.data.grad_accum * world);
  sum.metrics_path = log.jsonl_path();
  sum.csv_path = log.csv_path();
  sum.csv_monitor_dir = c.reporting.csv_monitor_dir;
  sum.tensorboard_file = log.tensorboard_file();
  sum.wandb_run_dir = log.wandb_run_dir();
  sum.world_size = world;
  sum.zero_stage = c.zero.stage;
  if (zero::hybrid_sharding(c.zero, world)) sum.shard_group = c.zero.shard_group_size;
  if (zero_init && value_source) sum.zero_init = value_source->describe();
  sum.init = resuming ? str("the checkpoint ", saved->dir().string())
                      : str(source.description,
                            source.weights.empty() ? str(", seed ", c.data.seed) : std::string());
  sum.plot_path = c.paths.out / "loss.png";
  sum.model_dir = c.paths.out / "model";
  WallClockBreakdown wall(c.reporting.wall_clock_breakdown,
                          stream);                // [Note: wall-clock breakdown]
  std::vector<monitor::LossPoint> plot_points;    // one per step on the writer, for the loss curve

  nn::StepContext ctx;
  ctx.device = c.device;
  ctx.stream = stream;
  ctx.compute_dtype = c.precision.dtype;

  reset_peak_memory(c.device);
  sum.memory_start = memory.start();
  sum.startup_seconds = seconds_since_process_start();
  if (cb.on_memory_start) cb.on_memory_start(sum.memory_start);
  const InjectedFaults injected = injected_faults_from_env();  // tests only (fault_injection.h)
  // After setup, so that it chains to the swap cleanup's handlers ([Note: stop on a signal]).
  const StopSignal stop_signal(c.faults.stop_grace_s);
  int64_t end_step = c.steps;  // earlier when a stop signal ends the run
  StepTimer timer, total_timer, step_timer;
  std::vector<double> interval_losses, interval_norms;
  int64_t interval_skipped = 0;
  int64_t interval_tokens = 0;
  bool logged = false;
  // Every rank saves its own shard; training waits only for the copy to the host. The loss plot
  // comes after, and its failure is a warning: it never costs a checkpoint.
  auto save = [&](int64_t done) {
    where = "save";
    StepTimer blocked;
    double waited = 0;  // for an earlier save still writing
    checkpoint::RankShard shard = saver.next_shard(waited);
    if (!engine->shard_is_replica()) engine->save_shard(shard);
    TrainState st;
    st.step = done;
    st.data = loader->state();
    st.config = resume_config_json(c, world);
    st.scheduler = scheduler->state();
    if (scaler) st.loss_scaler = scaler->state();
    checkpoint::GatheredWeights weights;
    if (c.reporting.checkpoint_weights)
      weights = checkpoint::gather_weights(*engine, mc, model.parameters(), c.precision.dtype,
                                           writer_rank, stream);
    waited += saver.save(std::move(shard), checkpoint_header(c, mc, world, engine->step_count(), st),
                         std::move(weights));
    sum.checkpoint_last_blocked_s = blocked.lap() - waited;
    sum.checkpoint_blocked_s += sum.checkpoint_last_blocked_s;
    sum.checkpoint_waited_s += waited;
    if (writer_rank) write_plot_or_warn(sum.plot_path, plot_points, sum.evals, cb);
  };
  for (int64_t step = resumed.step; step < c.steps; ++step) {
    where = str("step ", step + 1);
    const ProfileRange step_range(where);
    memory.begin_step(step + 1);
    engine->zero_grad();
    double loss = 0;  // each micro-batch's share of the global mean loss, summed
    const double loss_scale = scaler ? scaler->scale() : 1.0;
    const std::vector<data::Batch> batches = [&] {
      const ProfileRange range("next batches");
      return next_batches(*loader, c.data.grad_accum);
    }();
    // See [Note: loss normalisation] in nn/head_block.h and [Note: data-parallel step]: the summed
    // gradients are loss_scale x those of the global batch's loss.
    ctx.num_items_in_batch = global_loss_targets(batches, *engine);
    for (int64_t m = 0; m < c.data.grad_accum; ++m) {
      engine->begin_micro_step(m + 1 == c.data.grad_accum);
      ctx.loss_scale = micro_loss_scale(loss_scale, m == 0 && injects_overflow(c, step + 1));
      const data::Batch& batch = batches[static_cast<size_t>(m)];
      ctx.tokens = batch.inputs.to(c.device, stream);
      ctx.targets = batch.targets.to(c.device, stream);
      ctx.documents = nn::row_documents(batch.doc_starts, c.device, stream);
      wall.restart();
      const Tensor micro_loss = runner.forward(ctx);
      wall.lap(Phase::forward);
      runner.backward(ctx);
      wall.lap(Phase::backward);
      loss += micro_loss.to_floats(stream)[0];
      interval_tokens += batch.rows * c.data.seq_len;
    }
    {
      const ProfileRange range("finish gradient sync");
      engine->finish_gradient_sync();
    }
    ctx.num_items_in_batch = -1;  // the count and the documents were this step's batches' only
    ctx.documents = {};
    inject_gradient_fault(injected, step + 1, *engine, stream);
    if (c.comm) loss = engine->sum_over_ranks(loss);
    loss = inject_loss_fault(injected, step + 1, loss);
    inject_leak_fault(injected);
    wall.lap(Phase::comm);
    // One norm for every stage ([Note: chunked gradient norm]); a non-finite one stops the run or
    // skips the step ([Note: non-finite check], [Note: fp16 step]).
    const double grad_norm = engine->grad_norm();
    // See [Note: non-finite check]: throws when the run must stop here.
    stop_on_nonfinite(c, scaler.has_value(), step + 1, loss, grad_norm, *engine, stream);
    const StepPlan plan = plan_step(grad_norm, c.clip, scaler,
                                    c.precision.dtype == DType::bf16 && c.precision.check_grad_overflow);
    const double norm = plan.norm;
    const double lr = scheduler->lr();
    if (const auto betas = scheduler->betas())
      engine->set_betas(static_cast<float>(betas->beta1), static_cast<float>(betas->beta2));
    if (plan.update) {
      const ProfileRange range("optimizer step");
      engine->step(static_cast<float>(lr), plan.grad_scale);
    }
    if (plan.step_scheduler) scheduler->step();
    if (!plan.update) {
      ++interval_skipped;
      ++sum.skipped_steps;
    }
    synchronize(stream);
    memory.end_step();
    wall.lap(Phase::step);
    if (step == resumed.step) {
      const zero::MemoryBytes mem = engine->memory();
      sum.param_bytes = mem.params;
      sum.grad_bytes = mem.grads;
      sum.optimizer_bytes = mem.optimizer;
    }
    if (c.comm && c.check_params_every > 0 && (step + 1) % c.check_params_every == 0)
      engine->check_parameters_identical();
    interval_losses.push_back(loss);
    interval_norms.push_back(norm);
    const int64_t step_tokens = c.data.micro_batch * c.data.seq_len * c.data.grad_accum;
    sum.tokens += step_tokens;
    const double step_tokens_per_s = tokens_per_second(step_tokens, step_timer.lap()) * world;
    if (writer_rank) plot_points.push_back({step + 1, loss, step_tokens_per_s});

    const bool last = step + 1 == c.steps;
    if ((step + 1) % c.reporting.log_every == 0 || last) {
      const double seconds = timer.lap();
      monitor::StepMetrics r;
      r.step = step + 1;
      r.loss = mean_of(interval_losses);
      r.lr = lr;
      r.grad_norm = mean_of(interval_norms);
      r.loss_scale = plan.loss_scale;
      r.loss_scaling = scaler.has_value();
      r.skipped = interval_skipped;
      r.tokens_per_s_per_gpu = tokens_per_second(interval_tokens, seconds);
      r.tokens_per_s = r.tokens_per_s_per_gpu * world;
      r.world_size = world;
      r.mfu = mfu(r.tokens_per_s_per_gpu, per_token, peak);
      if (wall.enabled()) r.wall_clock = wall.take(static_cast<int64_t>(interval_losses.size()));
      const MemorySnapshot mem = memory_snapshot(c.device);
      r.mem_gib = mem.allocated_gib;
      r.peak_mem_gib = mem.peak_allocated_gib;
      r.reserved_gib = mem.reserved_gib;
      r.memory_peak = gib_of(memory.peak_report());
      r.host_memory = host_memory_snapshot();
      sum.peak_mem_gib = std::max(sum.peak_mem_gib, r.peak_mem_gib);
      if (!logged) sum.first_loss = r.loss;
      logged = true;
      sum.last_loss = r.loss;
      log.write(r);
      if (cb.on_log) cb.on_log(r);
      if (writer_rank && c.reporting.plot_every > 0 && (step + 1) % c.reporting.plot_every == 0)
        write_plot_or_warn(sum.plot_path, plot_points, sum.evals, cb);
      interval_losses.clear();
      interval_norms.clear();
      interval_skipped = 0;
      interval_tokens = 0;
    }
    if (evaluator && evaluator->due(step + 1, c.steps)) {
      where = str("the evaluation after step ", step + 1);
      const monitor::EvalMetrics e =
          evaluator->evaluate(*engine, model.blocks(), ctx, c.comm, step + 1);
      for (StepTimer* t : {&timer, &step_timer, &total_timer})
        t->exclude(e.seconds);  // the rates are training's
      sum.evals.push_back(e);
      sum.eval_seconds += e.seconds;
      log.write(e);
      if (cb.on_eval) cb.on_eval(e);
    }
    const bool saved_now = c.reporting.save_every > 0 && (step + 1) % c.reporting.save_every == 0;
    if (saved_now && !last) save(step + 1);
    if (cb.on_step) cb.on_step(step + 1, c.steps, loss);
    if (!last && (sum.stop_signal = stop_signal.agreed(*engine, world > 1))) {
      if (!saved_now) save(step + 1);
      end_step = sum.stopped_step = step + 1;
      break;
    }
  }
  sum.steps = end_step - resumed.step;
  sum.examples_cut = loader->examples_cut();
  sum.loss_scale = scaler ? scaler->scale() : 1.0;
  sum.seconds = total_timer.lap();
  sum.tokens_per_s = tokens_per_second(sum.tokens, sum.seconds);
  sum.mfu = mfu(sum.tokens_per_s, per_token, peak);
  sum.attention = kernels::attention_paths_used();
  sum.memory_peak = memory.peak_report();
  if (!sum.stop_signal) {
    save(c.steps);
    where = "save";
    // One group gathered at a time: at stage 3 no rank holds the whole model on its device.
    const checkpoint::GatheredWeights final_weights = checkpoint::gather_weights(
        *engine, mc, model.parameters(), c.precision.dtype, writer_rank, stream);
    if (writer_rank)
      checkpoint::write_weights(final_weights, sum.model_dir, io::kDefaultMaxShardBytes);
  }
  saver.wait();
  if (writer_rank) sum.checkpoint_dir = saver.last_saved();
  const checkpoint::CheckpointSaver::Written written = saver.written();
  sum.checkpoint_saves = written.saves;
  sum.checkpoint_bytes = written.bytes;
  sum.checkpoint_write_s = written.seconds;
  sum.resume_load_s = resume_load_s;
  return sum;
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
