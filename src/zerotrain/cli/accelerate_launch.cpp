// accelerate_children / apply_accelerate_ranks (accelerate_launch.h).
#include "zerotrain/cli/accelerate_launch.h"

#include "zerotrain/core/error.h"

namespace zt::cli {

std::vector<comm::ChildSpec> accelerate_children(const config::AccelerateConfig& a,
                                                 const std::filesystem::path& file, int port) {
  const config::AccelerateRanks& r = a.ranks;
  const int64_t local = r.processes_per_machine();
  std::vector<comm::ChildSpec> children;
  for (int64_t l = 0; l < local; ++l) {
    const int64_t rank = r.machine_rank * local + l;
    comm::EnvMap env = comm::rank_env(
        {.rank = rank,
         .world = r.num_processes,
         .local_rank = l,
         .local_world = local,
         .master_addr = r.num_machines > 1 ? *r.main_process_ip : std::string("127.0.0.1"),
         .port = port});
    env[kAccelerateConfigEnv] = std::filesystem::absolute(file).string();
    if (r.gpu_ids && *r.gpu_ids != "all") env["CUDA_VISIBLE_DEVICES"] = *r.gpu_ids;
    children.push_back({str("rank ", rank), std::move(env)});
  }
  return children;
}

void apply_accelerate_ranks(const config::AccelerateConfig& a, const config::GivenFlags& given,
                            int world_size, TrainFlags& flags) {
  const config::AccelerateRanks& r = a.ranks;
  if (given.contains("--nproc") && flags.nproc != r.num_processes)
    throw ValueError("train", str("--nproc ", flags.nproc, " but ", a.source, " has num_processes ",
                                  r.num_processes, "; make them agree"));
  if (world_size == 1 && r.num_machines > 1)
    throw ValueError("train", str(a.source, ": num_machines ", r.num_machines,
                                  ": start the ranks "
                                  "with `zerotrain launch --config-file FILE -- zerotrain train "
                                  "...` on each machine"));
  if (world_size > 1 && world_size != r.num_processes)
    throw ValueError("train", str(a.source, ": num_processes ", r.num_processes,
                                  " but the launcher started ", world_size, " ranks"));
  flags.nproc = static_cast<int>(r.num_processes);
  if (!a.use_cpu) return;
  if (given.contains("--device") && flags.device != "cpu")
    throw ValueError(
        "train",
        str("--device ", flags.device, " but ", a.source, " runs on the CPU (",
            a.backend == config::AccelerateBackend::multi_cpu ? "distributed_type MULTI_CPU"
                                                              : "use_cpu: true",
            "); make them agree"));
  flags.device = "cpu";
}

}  // namespace zt::cli
