// `zerotrain train`'s console output (train_console.h).
#include "zerotrain/cli/train_console.h"

#include <cstdio>
#include <memory>
#include <string>

#include "zerotrain/core/dtype.h"
#include "zerotrain/core/error.h"
#include "zerotrain/core/process_clock.h"
#include "zerotrain/train/memory_report.h"
#include "zerotrain/train/step_measures.h"
#include "zerotrain/train/stop_signal.h"

namespace zt::cli {

namespace {

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

// The log line of one evaluation.
std::string eval_line(const monitor::EvalMetrics& e, bool eval_only) {
  return str(eval_only ? str("eval at step ", e.step) : str("eval after step ", e.step), " | loss ",
             fmt("%.4f", e.loss), " | perplexity ", fmt("%.4g", e.perplexity), " | ", e.tokens,
             " tokens of ", e.sequences, " sequences | ", fmt("%.1f", e.seconds), " s");
}

// The log line of one logged step.
std::string step_line(const monitor::StepMetrics& m) {
  std::string line = str("step ", fmt("%6.0f", static_cast<double>(m.step)), " | loss ",
                         fmt("%.4f", m.loss), " | grad norm ", fmt("%.3f", m.grad_norm), " | lr ",
                         fmt("%.2e", m.lr), " | ", fmt("%.0f", m.tokens_per_s), " tok/s");
  if (m.world_size > 1) line += str(" (", fmt("%.0f", m.tokens_per_s_per_gpu), "/GPU)");
  if (m.loss_scaling)
    line += str(" | scale ", fmt("%g", m.loss_scale),
                m.skipped ? str(" (", m.skipped, " skipped)") : "");
  line += str(" | MFU ", train::format_mfu(m.mfu), " | mem ", fmt("%.2f", m.peak_mem_gib), " GiB");
  if (m.host_memory) line += str(" | rss ", fmt("%.2f", m.host_memory->rss), " GiB");
  if (m.wall_clock)
    line += str(" | ms fwd ", fmt("%.1f", m.wall_clock->forward_ms), " bwd ",
                fmt("%.1f", m.wall_clock->backward_ms), " comm ",
                fmt("%.1f", m.wall_clock->comm_ms), " step ", fmt("%.1f", m.wall_clock->step_ms));
  return line;
}

// The header's dtypes: gradient dtypes are named only when they differ from f32
// (zero/grad_comm.h).
std::string describe_dtypes(const train::TrainConfig& c, int world_size) {
  std::string dtypes(dtype_name(c.precision.dtype));
  if (c.precision.mode == optim::Precision::low) dtypes += " low precision";
  if (c.precision.grad_accum_dtype != DType::f32)
    dtypes += str(", ", dtype_name(c.precision.grad_accum_dtype), " gradients");
  if (c.precision.comm_dtype != DType::f32 && world_size > 1)
    dtypes += str(", reduced in ", dtype_name(c.precision.comm_dtype));
  return dtypes;
}

// The header's optimizer: "AdamW", "Adam with L2 decay amsgrad", "SGD Nesterov momentum 0.9", ...
std::string describe_optimizer(const optim::OptimizerConfig& o) {
  std::string optimizer = o.adam_w_mode ? "AdamW" : "Adam with L2 decay";
  if (o.amsgrad) optimizer += " amsgrad";
  if (o.kind != optim::OptimizerKind::adam) optimizer = optim::optimizer_kind_name(o.kind);
  if (o.kind == optim::OptimizerKind::sgd && o.momentum != 0)
    optimizer += str(o.nesterov ? " Nesterov" : "", " momentum ", o.momentum);
  if (!o.bias_correction && o.kind != optim::OptimizerKind::lion &&
      o.kind != optim::OptimizerKind::sgd)
    optimizer += " without bias correction";
  return optimizer;
}

// " x N ranks" after the device of a multi-rank run.
std::string ranks_suffix(int world_size) {
  return world_size > 1 ? str(" x ", world_size, " ranks") : "";
}

ProgressOptions step_bar_options() {
  ProgressOptions options;
  options.unit = "step";
  return options;
}

// The summary's lines about the run itself: steps, speed, memory, ZeRO state, evaluation.
void print_run_summary(const train::TrainSummary& s, int world) {
  const char* per = world > 1 ? " per rank" : "";
  std::printf("\n%-22s %s\n", "steps", std::to_string(s.steps).c_str());
  std::printf("%-22s %s\n", str("tokens", per).c_str(), std::to_string(s.tokens).c_str());
  std::printf("%-22s %s -> %s\n", "loss (first -> last)", fmt("%.4f", s.first_loss).c_str(),
              fmt("%.4f", s.last_loss).c_str());
  std::printf("%-22s %s s\n", "time", fmt("%.1f", s.seconds).c_str());
  if (world > 1)
    std::printf("%-22s %s\n", "tokens/s (all ranks)", fmt("%.0f", s.tokens_per_s * world).c_str());
  std::printf("%-22s %s\n", "tokens/s per GPU", fmt("%.0f", s.tokens_per_s).c_str());
  std::printf("%-22s %s\n", "MFU", train::format_mfu(s.mfu).c_str());
  std::printf("%-22s %s GiB\n", "peak memory", fmt("%.3f", s.peak_mem_gib).c_str());
  if (!s.attention.empty())  // cudnn: cuDNN's fused flash attention; native: zerotrain's kernels
    std::printf("%-22s %s%s\n", "attention", s.attention.c_str(),
                s.attention == "cpu" ? "" : " (ZT_ATTENTION=auto|cudnn|native chooses)");
  std::printf("%-22s stage %d%s: params %s, grads %s, optimizer %s MiB per rank\n",
              "ZeRO model state", s.zero_stage,
              s.shard_group > 0 ? str(" sharded in groups of ", s.shard_group, " ranks, ",
                                      world / s.shard_group, " replicas (hybrid)")
                                      .c_str()
                                : "",
              fmt("%.2f", static_cast<double>(s.param_bytes) / (1 << 20)).c_str(),
              fmt("%.2f", static_cast<double>(s.grad_bytes) / (1 << 20)).c_str(),
              fmt("%.2f", static_cast<double>(s.optimizer_bytes) / (1 << 20)).c_str());
  if (!s.zero_init.empty())
    std::printf("%-22s each rank built only its parameter shards, from %s\n", "zero.Init",
                s.zero_init.c_str());
  if (s.skipped_steps > 0 || s.loss_scale != 1.0)
    std::printf("%-22s %s (gradient overflow); final loss scale %s\n", "steps skipped",
                std::to_string(s.skipped_steps).c_str(), fmt("%g", s.loss_scale).c_str());
  std::printf("%-22s %s s from launch to the first step\n", "start-up",
              fmt("%.1f", s.startup_seconds).c_str());
  std::printf("%-22s %s\n", "memory at start", train::format_memory_report(s.memory_start).c_str());
  std::printf("%-22s step %lld: %s\n", "memory at peak", static_cast<long long>(s.memory_peak.step),
              train::format_memory_report(s.memory_peak).c_str());
  if (!s.evals.empty()) {
    const monitor::EvalMetrics& e = s.evals.back();
    std::printf("%-22s %s (perplexity %s) after step %lld; %zu evaluations, %s s in all\n",
                "eval loss", fmt("%.4f", e.loss).c_str(), fmt("%.4g", e.perplexity).c_str(),
                static_cast<long long>(e.step), s.evals.size(),
                fmt("%.1f", s.eval_seconds).c_str());
  }
}

// The summary's lines about where things came from and went: the init, the model, the
// checkpoints, the metrics files and the monitors.
void print_output_summary(const train::TrainSummary& s) {
  std::printf("%-22s %s\n", "started from", s.init.c_str());
  std::printf("%-22s %s\n", "model", s.model_dir.string().c_str());
  std::printf("%-22s %s\n", "checkpoint", s.checkpoint_dir.string().c_str());
  if (s.checkpoint_saves > 0) {
    const double gb = static_cast<double>(s.checkpoint_bytes) / 1e9;
    std::printf(
        "%-22s %d saved, %s GB per save on this rank; training blocked %s s in all for "
        "the copies to host memory (%s s at the last save) and %s s for earlier saves "
        "still writing (or the first save's buffers still being made); files written in %s s (%s "
        "GB/s)\n",
        "checkpoint saves", s.checkpoint_saves, fmt("%.3f", gb / s.checkpoint_saves).c_str(),
        fmt("%.3f", s.checkpoint_blocked_s).c_str(),
        fmt("%.3f", s.checkpoint_last_blocked_s).c_str(),
        fmt("%.3f", s.checkpoint_waited_s).c_str(), fmt("%.3f", s.checkpoint_write_s).c_str(),
        fmt("%.2f", s.checkpoint_write_s > 0 ? gb / s.checkpoint_write_s : 0.0).c_str());
  }
  if (s.examples_cut > 0)
    std::printf(
        "%-22s %llu examples longer than --seq-len + 1 tokens were cut to fit a row "
        "(--packing off)\n",
        "examples cut", static_cast<unsigned long long>(s.examples_cut));
  if (s.resume_load_s > 0)
    std::printf("%-22s this rank's shard read in %s s\n", "resumed",
                fmt("%.3f", s.resume_load_s).c_str());
  std::printf("%-22s %s\n", "metrics", s.metrics_path.string().c_str());
  std::printf("%-22s %s\n", "metrics (CSV)", s.csv_path.string().c_str());
  if (!s.csv_monitor_dir.empty())
    std::printf("%-22s %s\n", "csv_monitor", s.csv_monitor_dir.string().c_str());
  if (!s.tensorboard_file.empty())
    std::printf("%-22s %s\n", "tensorboard", s.tensorboard_file.string().c_str());
  if (!s.wandb_run_dir.empty())
    std::printf("%-22s %s (upload: wandb sync %s)\n", "wandb (offline)",
                s.wandb_run_dir.string().c_str(), s.wandb_run_dir.string().c_str());
  std::printf("%-22s %s\n", "loss/throughput plot", s.plot_path.string().c_str());
}

}  // namespace

void print_eval_only_header(const train::TrainConfig& c, int world_size) {
  std::printf("zerotrain train --eval-only: %s on %s%s, %s, seq_len %lld, micro-batch %lld\n",
              (c.paths.resume.empty() ? c.paths.model : c.paths.resume).string().c_str(),
              to_string(c.device).c_str(), ranks_suffix(world_size).c_str(),
              std::string(dtype_name(c.precision.dtype)).c_str(),
              static_cast<long long>(c.data.seq_len), static_cast<long long>(c.data.micro_batch));
  std::fflush(stdout);  // before a refusal on stderr
}

train::TrainCallbacks eval_only_callbacks(const train::TrainConfig& c) {
  train::TrainCallbacks cb;
  cb.on_eval_set = [&c](const std::string& set) {
    std::printf("eval data: %s, %s\n", c.eval.data.string().c_str(), set.c_str());
  };
  cb.on_eval = [](const monitor::EvalMetrics& e) {
    std::printf("%s\n", eval_line(e, true).c_str());
  };
  return cb;
}

void print_eval_only_result(const train::TrainSummary& s) {
  std::printf("%-22s %s\n", "evaluated", s.init.c_str());
}

void print_train_header(const train::TrainConfig& c, int world_size) {
  std::printf("zerotrain train: %s on %s%s, %s, %s, %lld steps x %lld x %lld tokens\n",
              c.paths.model.string().c_str(), to_string(c.device).c_str(),
              ranks_suffix(world_size).c_str(), describe_dtypes(c, world_size).c_str(),
              describe_optimizer(c.optimizer).c_str(), static_cast<long long>(c.steps),
              static_cast<long long>(c.data.micro_batch * c.data.grad_accum * world_size),
              static_cast<long long>(c.data.seq_len));
}

TrainConsole::TrainConsole(const train::TrainConfig& config)
    : config_(config), bar_("train", static_cast<uint64_t>(config.steps), step_bar_options()) {}

train::TrainCallbacks TrainConsole::callbacks() {
  train::TrainCallbacks cb;
  cb.on_eval_set = [this](const std::string& set) {
    std::printf("eval data: %s, %s, %s\n", config_.eval.data.string().c_str(), set.c_str(),
                config_.eval.every
                    ? str("after every ", *config_.eval.every, " steps and the last").c_str()
                    : "after the last step");
    std::fflush(stdout);
  };
  cb.on_eval = [this](const monitor::EvalMetrics& e) {
    if (bar_.is_tty()) std::fputs("\r\033[K", stderr);
    std::printf("%s\n", eval_line(e, false).c_str());
    std::fflush(stdout);
  };
  cb.on_memory_start = [](const train::MemoryReport& m) {
    std::printf("memory at start (rank 0): %s\n", train::format_memory_report(m).c_str());
    std::printf("start-up (rank 0): %.1f s from launch to the first step\n",
                seconds_since_process_start());
    std::fflush(stdout);
  };
  cb.on_log = [this](const monitor::StepMetrics& m) {
    last_tokens_per_s_ = m.tokens_per_s;
    if (bar_.is_tty()) std::fputs("\r\033[K", stderr);
    std::printf("%s\n", step_line(m).c_str());
    std::fflush(stdout);
  };
  cb.on_step = [this](int64_t done, int64_t, double loss) {
    if (!bar_.is_tty()) return;  // off a terminal the log lines are the progress
    bar_.set_suffix(last_tokens_per_s_ > 0
                        ? fmt("loss %.3f", loss) + fmt("  %.0f tok/s", last_tokens_per_s_)
                        : fmt("loss %.3f", loss));
    bar_.update(static_cast<uint64_t>(done));
  };
  return cb;
}

void TrainConsole::end_progress() {
  if (bar_.is_tty()) bar_.finish();
}

void print_stop_line(const train::TrainSummary& s, const std::filesystem::path& out) {
  std::printf("[train] stopped on %s after step %lld; checkpoint %s (continue with --resume %s)\n",
              train::stop_signal_name(s.stop_signal), static_cast<long long>(s.stopped_step),
              s.checkpoint_dir.string().c_str(), out.string().c_str());
  std::fflush(stdout);
}

void print_summary(const train::TrainSummary& s, int world_size) {
  print_run_summary(s, world_size);
  print_output_summary(s);
}

}  // namespace zt::cli
