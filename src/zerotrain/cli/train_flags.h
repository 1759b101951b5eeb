// The flags of `zerotrain train`, all in one struct: the options that bind straight to a
// TrainConfig field fill `config`; the ones read as text first (--device, --dtype, ...) keep
// their text here until apply_text_flags turns it into config fields, after the parse.
// add_train_flags registers every option on the subcommand in the order --help lists them.
// Tested by the CLI ctests of tests/cli/hostile_inputs.cmake, tests/cli/eval_cli.cmake and
// train_zero_stage_flag_fills_ds_config (tests/CMakeLists.txt).
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "zerotrain/cli/training_sample.h"
#include "zerotrain/core/device.h"
#include "zerotrain/train/offload_flags.h"
#include "zerotrain/train/trainer.h"

namespace zt::cli {

struct TrainFlags {
  train::TrainConfig config;
  std::string device = cuda_available() ? "cuda" : "cpu";  // --device
  std::string dtype = "f32";                               // --dtype
  std::string grad_accum_dtype = "f32";                    // --grad-accum-dtype
  std::string comm_dtype = "f32";                          // --comm-dtype
  std::string precision = "mixed";                         // --precision
  std::string weight_decay_mode = "decoupled";             // --weight-decay-mode
  std::string on_nonfinite = "stop";                       // --on-nonfinite
  std::string deepspeed;                                   // --deepspeed: a ds_config.json
  std::string accelerate_config;                           // --accelerate-config: its YAML
  std::string gpu_memory_cap;                              // --gpu-memory-cap, as typed
  std::string host_memory_cap;                             // --host-memory-cap, as typed
  int nproc = 1;                                           // --nproc
  train::OffloadFlags offload;                             // --offload-* and friends
  SampleOptions sample;                                    // --sample-*
};

// Registers every train option, bound to `flags` (CLI11 keeps references: `flags` must outlive
// `cmd`), and the help footer.
void add_train_flags(CLI::App& cmd, TrainFlags& flags);

// Sets the config fields of the text flags (--device, --dtype, --grad-accum-dtype, --comm-dtype,
// --precision, --weight-decay-mode, --on-nonfinite). Throws ValueError for a bad value.
void apply_text_flags(TrainFlags& flags);

}  // namespace zt::cli
