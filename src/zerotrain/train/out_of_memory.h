// Out of memory as a message, not a crash: the one-line error of a training run whose allocation
// failed, naming the allocation and what was in use and free (the allocator's words), the
// estimated peak of the whole run (estimate/peak_estimate.h), and the fastest setup zerotrain
// train can run (offload included) that the estimate fits under the cap and the host's memory
// (estimate/recommend.h), as flags. See
// [Note: out of memory]. Tested by tests/train/test_out_of_memory.cpp.
//
// [Note: out of memory]
// train::train() catches the allocator's OutOfMemoryError from setup, any step or a save; by then
// the run's tensors are freed (their owners unwound), and it throws this error instead, which the
// CLI prints as one line and exits with 1. The budget the advice aims at is the allocator's cap
// (--gpu-memory-cap / --host-memory-cap), else the GPU's memory, else the host's; offload setups
// must also fit the host (--host-memory-cap, else its physical memory). When the
// estimate of the failed setup is already under that budget (the estimate missed something), the
// advice asks for 10% less than that estimate instead. Outputs: a failure at setup or in a step
// leaves metrics.jsonl/metrics.csv with the steps logged so far and no model/ or checkpoints/ of
// this run (checkpoints written by --save-every before the failure stay valid; a checkpoint is
// complete only with its COMPLETE marker). Multi-rank runs: the error is raised on the rank that
// failed, which exits non-zero; the other ranks wait in their next collective. `zerotrain launch`
// (and --nproc) stops them as soon as one rank exits non-zero, and mpirun aborts the job; left on
// their own, MPI ranks give up after the collective timeout ([Note: collective timeout]) and NCCL
// ranks after the watchdog's ([Note: NCCL timeout]).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "zerotrain/core/error.h"
#include "zerotrain/estimate/recommend.h"
#include "zerotrain/train/trainer.h"

namespace zt::train {

// The strategies zerotrain train runs, in the estimator's order (estimate/recommend.h): stages
// 0-3, then offload to the host, then to NVMe (the one switch, kTrainRunsNvme in
// out_of_memory.cpp).
std::vector<estimate::Strategy> train_strategies();

// The bytes the advice aims at for `device`: the allocator's cap when set, else the device's
// memory.
double memory_budget(Device device);

// The host bytes offload may hold on this machine: the host allocator's cap (--host-memory-cap)
// when set, else the machine's physical memory (0 when unknown).
double host_memory_budget();

// The estimate's view of the run: config, world size and model, on config.device.
estimate::RunSetup run_setup(const TrainConfig& config, const nn::ModelConfig& model, int world);

// "--zero-stage 3 --offload-optimizer cpu --offload-param cpu --micro-batch 1 --grad-accum 8
// --activation-checkpointing": the flags that turn `config` into `setup`, keeping the global batch
// when the micro-batch shrinks; an offload flag only where the setup's device differs from the
// config's, and --nvme-path DIR when the setup swaps to NVMe and the config names no path. A run
// configured by a ds_config gets its keys instead, since flags must agree with the keys it sets:
// "in ds.json: zero_optimization.stage 3, zero_optimization.offload_optimizer.device cpu,
// train_micro_batch_size_per_gpu 1, gradient_accumulation_steps 8; and --activation-checkpointing".
std::string setup_flags(const TrainConfig& config, const estimate::RunSetup& setup);

// The memory the advice aims at: the run device's (memory_budget) and the host's
// (host_memory_budget), and which of them ran out.
struct MemoryBudgets {
  double device = 0;          // bytes per GPU (per rank on the CPU); 0: unknown
  double host = 0;            // bytes of host memory per node for offload; 0: not limited
  bool host_ran_out = false;  // a GPU run's host allocation (offload's) failed
};

// "; the run needs about X per GPU[ and H of host memory per node] (estimated peak of ...); fits
// in <budget>: <setup> (about ...): <flags>", or why nothing fits. Throws when no estimate can be
// made (the caller says so).
std::string out_of_memory_advice(const TrainConfig& config, int world, const MemoryBudgets& b);

// The error train() throws for `cause`, raised while the run was at `where` ("setup", "step 3").
// Never throws itself: an estimate that cannot be made is left out of the message with the reason.
OutOfMemoryError out_of_memory_error(const TrainConfig& config, std::string_view where,
                                     const OutOfMemoryError& cause);

}  // namespace zt::train
