// check_nvme_path / check_nvme_paths (nvme_path_check.h).
#include "zerotrain/train/nvme_path_check.h"

#include "zerotrain/core/allocator.h"
#include "zerotrain/core/error.h"
#include "zerotrain/estimate/peak_estimate.h"
#include "zerotrain/io/hf_config.h"
#include "zerotrain/io/swap_directory.h"
#include "zerotrain/train/out_of_memory.h"

namespace zt::train {

namespace fs = std::filesystem;

void check_nvme_path(const char* section, const fs::path& path, double needed) {
  const auto bytes = static_cast<int64_t>(needed > 0 ? needed : 0);
  if (const auto problem = io::swap_path_problem(path.string(), bytes))
    throw ValueError("config", str("zero_optimization.", section, ".nvme_path (--nvme-path) ",
                                   path.string(), ": ", problem->what, "; the swap files need ",
                                   format_bytes(static_cast<size_t>(bytes))));
}

void check_nvme_paths(const TrainConfig& c, int ranks_on_this_machine) {
  const zero::OffloadPolicy& p = c.zero.offload;
  const bool opt = p.optimizer.device == config::OffloadDevice::nvme;
  const bool par = p.params.device == config::OffloadDevice::nvme;
  if (!opt && !par) return;
  const fs::path config_path =
      fs::is_directory(c.paths.model) ? c.paths.model / "config.json" : c.paths.model;
  TrainConfig gpu = c;
  if (gpu.device.is_cpu()) gpu.device = Device::cuda(0);  // run_setup leaves a CPU run's out
  const estimate::PeakEstimate e = estimate::estimate_peak(
      run_setup(gpu, io::read_hf_config(config_path), ranks_on_this_machine));
  // Each disk item names the state it holds: the parameter shard or the optimizer state.
  double param_bytes = 0, opt_bytes = 0;
  for (const estimate::MemoryItem& it : e.disk_items)
    (it.name.starts_with("parameter") ? param_bytes : opt_bytes) += it.bytes;
  const double ranks = static_cast<double>(ranks_on_this_machine);
  const bool shared = opt && par && p.optimizer.nvme_path == p.params.nvme_path;
  if (opt)
    check_nvme_path("offload_optimizer", p.optimizer.nvme_path,
                    ranks * (opt_bytes + (shared ? param_bytes : 0)));
  if (par && !shared) check_nvme_path("offload_param", p.params.nvme_path, ranks * param_bytes);
}

}  // namespace zt::train
