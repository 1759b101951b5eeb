// The NVMe offload's swap directory, checked before a run builds anything: each nvme_path an
// offload to NVMe names must be an existing directory the run can write in, on a file system with
// room for the swap files (the estimate's swap-file bytes of the ranks on this machine,
// estimate/peak_estimate.h [Note: offload layout]). One line each, naming the ds_config key, the
// flag, the path and the bytes needed. Tested by tests/train/test_nvme_path_check.cpp.
#pragma once

#include <filesystem>

#include "zerotrain/train/trainer.h"

namespace zt::train {

// Checks `path` (for the offload section `section`: "offload_optimizer" or "offload_param")
// against `needed` bytes (io::swap_path_problem). Throws ValueError "[config] zero_optimization.<section>.nvme_path
// (--nvme-path) <path>: <what is wrong>; the swap files need <needed>".
void check_nvme_path(const char* section, const std::filesystem::path& path, double needed);

// Every nvme_path of c.zero.offload whose device is nvme, against the swap-file bytes the
// estimate gives the run's setup for `ranks_on_this_machine` ranks (both sections sharing one
// path share the need). Nothing without an offload to NVMe.
void check_nvme_paths(const TrainConfig& c, int ranks_on_this_machine);

}  // namespace zt::train
