// check_model_fits_machine (see model_fit.h).
#include "zerotrain/train/model_fit.h"

#include <unistd.h>

#include "zerotrain/core/allocator.h"
#include "zerotrain/core/checked_math.h"
#include "zerotrain/estimate/activation_memory.h"
#include "zerotrain/io/hf_config.h"
#include "zerotrain/nn/model_size.h"

namespace zt::train {

namespace {

// The machine's physical memory in bytes, 0 when unknown.
double physical_host_memory() {
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page = ::sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? static_cast<double>(pages) * static_cast<double>(page) : 0.0;
}

std::string gib(double bytes) {
  return format_bytes(static_cast<size_t>(std::min(bytes, 1.8e19)));
}

}  // namespace

void check_model_fits_machine(const TrainConfig& c, const nn::ModelConfig& model, int world) {
  const nn::ModelSize size = nn::model_size(model);
  const int64_t dtype_bytes = static_cast<int64_t>(dtype_size(c.precision.dtype));
  if (!checked_mul(c.data.micro_batch, c.data.seq_len))
    throw ValueError("train", str("--micro-batch ", c.data.micro_batch, " x --seq-len ",
                                  c.data.seq_len, " tokens do not fit in 64 bits"));
  estimate::ActivationOptions ao;
  ao.micro_batch = c.data.micro_batch;
  ao.seq = c.data.seq_len;
  ao.dtype_bytes = dtype_bytes;
  ao.checkpointing = c.activation_checkpointing;
  const double activations = estimate::estimate_activations(model, ao).peak;
  const bool params_offloaded = c.zero.offload.params.device == zero::OffloadDevice::nvme;
  const int shards = c.zero.stage == 3 ? world : 1;
  const double params = params_offloaded ? 0.0
                                         : static_cast<double>(size.params) *
                                               static_cast<double>(dtype_bytes) / shards;
  const double host = physical_host_memory();
  const double device =
      c.device.is_cuda() ? static_cast<double>(cuda_device_memory(c.device.index)) : 0.0;
  if (host <= 0 || params + activations <= device + host) return;
  const std::string machine =
      str("more than this machine's memory (",
          c.device.is_cuda() ? str(gib(device), " on ", to_string(c.device), " + ") : "", gib(host),
          " of host memory)");
  if (activations > params)
    throw ValueError("train", str("--micro-batch ", c.data.micro_batch, " x --seq-len ",
                                  c.data.seq_len, ": one micro-batch's activations need about ",
                                  gib(activations), " per rank (the estimator's peak), ", machine));
  throw ValueError(
      "train",
      str(io::hf_config_key(model.family, size.largest_field), ": the model has ", size.params,
          " parameters, ", gib(params), " of ", dtype_name(c.precision.dtype), " values per rank",
          shards > 1 ? str(" (1/", shards, " at ZeRO stage 3)") : std::string(), ", ", machine));
}

}  // namespace zt::train
