// `zerotrain train`: training of a Hugging Face-layout model on a token file, in one process or
// data-parallel over the ranks of a launcher (mpirun, srun, torchrun, `zerotrain launch`, or
// `--nproc N`, which re-runs this command under `zerotrain launch`), with a progress bar (live loss
// and tokens/s), periodic log lines, the validation loss of --eval-data, a final summary table and
// a short greedy sample of the trained model (training_sample.h), printed by rank 0. --eval-only
// evaluates the model once instead.
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "zerotrain/cli/accelerate_launch.h"
#include "zerotrain/cli/commands.h"
#include "zerotrain/cli/given_flags.h"
#include "zerotrain/cli/relaunch.h"
#include "zerotrain/cli/train_console.h"
#include "zerotrain/cli/train_flags.h"
#include "zerotrain/cli/training_sample.h"
#include "zerotrain/comm/agreed_checks.h"
#include "zerotrain/comm/process_group.h"
#include "zerotrain/config/accelerate_ds_config.h"
#include "zerotrain/config/load.h"
#include "zerotrain/core/allocator.h"
#include "zerotrain/core/device.h"
#include "zerotrain/core/error.h"
#include "zerotrain/core/files.h"
#include "zerotrain/estimate/units.h"
#include "zerotrain/io/hf_config.h"
#include "zerotrain/train/ds_train_config.h"
#include "zerotrain/train/nvme_path_check.h"
#include "zerotrain/train/offload_flags.h"
#include "zerotrain/train/trainer.h"

namespace zt::cli {

namespace {

// train() on one rank of a multi-rank run: a failure is printed and ends the process at once
// (exit 1). Returning would run MPI_Finalize (the process group's destructor), which waits for
// ranks still inside a collective with this one: the job would hang instead of dying whole, as
// mpirun and the launcher stop the other ranks when one exits non-zero. A failure every rank
// agreed on (comm::ErrorReported, [Note: one line per error across ranks]) goes on up instead:
// every rank is leaving together, and finalizing spares mpirun's note about ranks that did not.
// An error only this rank met is named with its rank, unless a launcher prefixes its lines.
template <class Train>
train::TrainSummary run_rank(int rank, int world_size, Train&& train_fn) {
  if (world_size == 1) return train_fn();
  const std::string who =
      std::getenv(comm::kRankPrefixEnv) ? std::string() : str("[rank ", rank, "] ");
  try {
    return train_fn();
  } catch (const comm::ErrorReported&) {
    throw;
  } catch (const Error& e) {
    std::fprintf(stderr, "%s%s\n", who.c_str(), e.what());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s[zerotrain] unexpected error: %s\n", who.c_str(), e.what());
  }
  std::fflush(stdout);
  std::fflush(stderr);
  std::exit(1);
}

void print_lines(const std::vector<std::string>& lines) {
  for (const std::string& l : lines)
    std::fprintf(stderr, "%s\n", l.c_str());
}

// 128 + the signal number after a stop on a signal, as a process killed by it reports; else 0.
int stop_exit_code(const train::TrainSummary& s) {
  return s.stop_signal ? 128 + s.stop_signal : 0;
}

// A --gpu-memory-cap / --host-memory-cap value in bytes (0: not given).
size_t memory_cap(const std::string& text, const char* option) {
  if (text.empty()) return 0;
  try {
    return static_cast<size_t>(estimate::parse_size(text, option));
  } catch (const ValueError& e) {
    throw ValueError("train", std::string(e.what()).substr(e.component().size() + 3));
  }
}

// Applies the caps to the run device's allocators (see [Note: caching allocator]).
void apply_memory_caps(const std::string& gpu, const std::string& host, Device device) {
  if (const size_t cap = memory_cap(gpu, "--gpu-memory-cap")) {
    if (!device.is_cuda())
      throw ValueError("train", str("--gpu-memory-cap ", gpu, ": the run is on ", to_string(device),
                                    " (use --host-memory-cap for a CPU run)"));
    set_cuda_memory_cap(device.index, cap);
  }
  if (const size_t cap = memory_cap(host, "--host-memory-cap")) set_cpu_memory_cap(cap);
}

// Resolves a ds_config's text against the command line and maps it onto `c` (ds_train_config.h);
// `source` names it in errors. Rank 0 prints the warnings (every rank reads the same file).
void apply_ds_config_text(const std::string& text, const std::string& source,
                          const config::GivenFlags& given, bool print_warnings,
                          train::TrainConfig& c) {
  const std::filesystem::path model_config =
      std::filesystem::is_directory(c.paths.model) ? c.paths.model / "config.json" : c.paths.model;
  const int64_t hidden = io::read_hf_config(model_config).hidden_size;
  const config::LoadedConfig loaded =
      config::parse_ds_config(text, source, train::train_overrides(c, given, hidden));
  if (print_warnings) print_lines(loaded.warnings);
  train::apply_ds_config(loaded.config, given, c);
  c.paths.ds_config = source;
}

// An Accelerate config file and the run it describes (config/accelerate_ds_config.h).
struct AccelerateSettings {
  config::AccelerateConfig file;
  config::AccelerateRun run;
};

// The run's ds_config, then zero.Init's choice.
void apply_accelerate(const AccelerateSettings& a, const config::GivenFlags& given,
                      bool print_warnings, train::TrainConfig& c) {
  if (print_warnings) {
    print_lines(a.file.warnings);
    print_lines(a.run.warnings);
  }
  apply_ds_config_text(a.run.ds_config.dump(), a.run.ds_source, given, print_warnings, c);
  if (!a.run.zero_init) c.zero.zero_init = false;
}

// This rank's place among the ranks of a launcher; empty for a single process. The device
// communicator goes before the process group, whose destructor finalizes MPI.
struct RankGroup {
  std::unique_ptr<comm::ProcessGroup> group;
  std::unique_ptr<comm::Communicator> device_comm;
};

// Joins the ranks of a multi-rank run and points c.comm at the communicator the gradients are
// reduced over: the GPUs' (one GPU per rank) or the host's.
RankGroup join_ranks(const comm::ProcessEnv& env, train::TrainConfig& c) {
  RankGroup ranks;
  if (env.world_size == 1) return ranks;
  ranks.group = comm::init_process_group();
  if (c.device.is_cuda()) {
    c.device = ranks.group->local_device();  // one GPU per rank
    ranks.device_comm = ranks.group->make_device_communicator(c.device);
    c.comm = ranks.device_comm.get();
  } else {
    c.comm = &ranks.group->host();
  }
  return ranks;
}

// The ds_config (of --deepspeed or --accelerate-config) or the offload flags, then the memory
// caps: the last settings of `c`.
void apply_run_settings(const TrainFlags& flags, const config::GivenFlags& given,
                        const std::optional<AccelerateSettings>& accelerate, bool rank0,
                        train::TrainConfig& c) {
  train::apply_offload_flags(flags.offload, c.zero);
  if (accelerate)
    apply_accelerate(*accelerate, given, rank0, c);
  else if (!flags.deepspeed.empty())
    apply_ds_config_text(read_text_file(flags.deepspeed, "config"), flags.deepspeed, given, rank0,
                         c);
  else
    train::check_offload_flags(c.zero, given);
  apply_memory_caps(flags.gpu_memory_cap, flags.host_memory_cap, c.device);
}

// --accelerate-config's file (or none) and its run, read before any rank starts so that a bad
// file is one line; its ranks and device applied to `flags`.
std::optional<AccelerateSettings> read_accelerate(TrainFlags& flags,
                                                  const config::GivenFlags& given, int world_size) {
  if (flags.accelerate_config.empty()) return std::nullopt;
  if (!flags.deepspeed.empty())
    throw ValueError("train",
                     "--deepspeed and --accelerate-config: give one (an Accelerate "
                     "config names its ds_config as deepspeed_config.deepspeed_config_file)");
  AccelerateSettings a{config::read_accelerate_config(flags.accelerate_config), {}};
  apply_accelerate_ranks(a.file, given, world_size, flags);
  std::optional<std::string> dtype;  // the dtype a model is loaded in (FSDP's rule)
  if (given.contains("--dtype")) dtype = flags.dtype == "f16" ? "fp16" : flags.dtype;
  a.run = config::accelerate_ds_config(a.file, dtype);
  return a;
}

// Rank 0 of --eval-only: the header, the evaluation, the closing line.
int run_eval_only(const train::TrainConfig& c, int world_size) {
  print_eval_only_header(c, world_size);
  const train::TrainCallbacks cb = eval_only_callbacks(c);
  const train::TrainSummary s = run_rank(0, world_size, [&] { return train::train(c, cb); });
  print_eval_only_result(s);
  return 0;
}

// Rank 0 of a training run: the header, training under the progress bar, then the stop line or
// the summary and the sample.
int run_training(const TrainFlags& flags, int world_size) {
  const train::TrainConfig& c = flags.config;
  print_train_header(c, world_size);
  TrainConsole console(c);
  const train::TrainCallbacks cb = console.callbacks();
  const train::TrainSummary s = run_rank(0, world_size, [&] { return train::train(c, cb); });
  console.end_progress();
  if (s.stop_signal) {
    print_stop_line(s, c.paths.out);
    return stop_exit_code(s);
  }
  print_summary(s, world_size);
  print_training_sample(flags.sample, c.paths.model, s.model_dir, c.device, c.precision.dtype);
  return 0;
}

// The parsed flags -> the TrainConfig (re-run under the launcher for --nproc, joined to the
// other ranks) -> train() -> the console of rank 0. Returns the exit code.
int run_train_command(TrainFlags& flags, const config::GivenFlags& given,
                      const std::vector<std::string>& args) {
  train::TrainConfig& c = flags.config;
  const comm::ProcessEnv env = comm::detect_process_env();
  // Under a launcher, a refusal met before the ranks joined is agreed on once they have.
  std::exception_ptr early;
  std::optional<AccelerateSettings> accelerate;
  try {
    accelerate = read_accelerate(flags, given, env.world_size);
    apply_text_flags(flags);
    run_nproc_ranks(args, {flags.nproc, flags.accelerate_config}, env.world_size,
                    !c.device.is_cuda(), c.faults.stop_grace_s);
  } catch (const Error&) {
    if (env.world_size == 1) throw;
    early = std::current_exception();
  }
  const RankGroup ranks = join_ranks(env, c);
  comm::agree_on_checks(c.comm, c.device, [&] {
    if (early) std::rethrow_exception(early);
    apply_run_settings(flags, given, accelerate, env.rank == 0, c);
    // Before the header multiplies the batch sizes (train() checks them again, for library use).
    train::validate_train_config(c);
    // Before anything is built: the swap directory exists, is writable and has room.
    train::check_nvme_paths(c, env.world_size);
  });
  if (env.rank != 0)
    return stop_exit_code(run_rank(env.rank, env.world_size, [&] { return train::train(c); }));
  return c.eval.only ? run_eval_only(c, env.world_size) : run_training(flags, env.world_size);
}

}  // namespace

void add_train_command(CLI::App& app, std::function<int()>& action,
                       const std::vector<std::string>& args) {
  auto* cmd = app.add_subcommand(
      "train",
      "Train a causal language model on a token file (one process or data-parallel ranks)");
  // The callbacks hold the flags: CLI11 keeps references to their fields.
  auto flags = std::make_shared<TrainFlags>();
  add_train_flags(*cmd, *flags);
  cmd->callback([&action, flags, args, cmd] {
    if (!flags->config.eval.only) {
      if (flags->config.paths.data.empty()) throw CLI::RequiredError("--data");
      if (flags->config.paths.out.empty()) throw CLI::RequiredError("--out");
    }
    action = [flags, args, given = given_flags(*cmd)] {
      return run_train_command(*flags, given, args);
    };
  });
}

}  // namespace zt::cli
