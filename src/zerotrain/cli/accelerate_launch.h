// Accelerate config files (config/accelerate_config.h) on the command line: the ranks `zerotrain
// launch --config-file FILE` starts on this machine, as `accelerate launch --config_file` starts
// them, and what `zerotrain train --accelerate-config FILE` takes from the file besides its
// ds_config (the number of ranks, the CPU). Tested by tests/cli/accelerate_cli.py.
#pragma once

#include <filesystem>
#include <vector>

#include "zerotrain/cli/train_flags.h"
#include "zerotrain/comm/launcher.h"
#include "zerotrain/config/accelerate_config.h"
#include "zerotrain/config/overrides.h"

namespace zt::cli {

// The variable `zerotrain launch --config-file FILE` sets for its ranks (FILE's absolute path),
// which `zerotrain train` reads as --accelerate-config.
inline constexpr const char* kAccelerateConfigEnv = "ZEROTRAIN_ACCELERATE_CONFIG";

// This machine's ranks: global ranks machine_rank * P .. machine_rank * P + P - 1 of
// num_processes (P = num_processes / num_machines), rank 0 at main_process_ip (127.0.0.1 on one
// machine) and `port`, CUDA_VISIBLE_DEVICES = gpu_ids unless "all", kAccelerateConfigEnv = `file`.
std::vector<comm::ChildSpec> accelerate_children(const config::AccelerateConfig& a,
                                                 const std::filesystem::path& file, int port);

// The file's ranks and device on the train flags: nproc = num_processes (a typed --nproc must
// agree), --device cpu with use_cpu or MULTI_CPU (a typed --device must agree). world_size: the
// ranks a launcher started (1 without one), which must be num_processes. Throws ValueError.
void apply_accelerate_ranks(const config::AccelerateConfig& a, const config::GivenFlags& given,
                            int world_size, TrainFlags& flags);

}  // namespace zt::cli
