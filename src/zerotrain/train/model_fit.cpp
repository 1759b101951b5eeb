// check_model_fits_machine (see model_fit.h).
#include "zerotrain/train/model_fit.h"

#include <unistd.h>

#include "zerotrain/core/allocator.h"
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

}  // namespace

void check_model_fits_machine(const TrainConfig& c, const nn::ModelConfig& model, int world) {
  if (c.zero.offload.params.device == zero::OffloadDevice::nvme) return;
  const nn::ModelSize size = nn::model_size(model);
  const int shards = c.zero.stage == 3 ? world : 1;
  const double bytes = static_cast<double>(size.params) *
                       static_cast<double>(dtype_size(c.precision.dtype)) / shards;
  const double host = physical_host_memory();
  const double device =
      c.device.is_cuda() ? static_cast<double>(cuda_device_memory(c.device.index)) : 0.0;
  if (host <= 0 || bytes <= device + host) return;
  const auto fmt = [](double b) { return format_bytes(static_cast<size_t>(b)); };
  throw ValueError(
      "train",
      str(io::hf_config_key(model.family, size.largest_field), ": the model has ", size.params,
          " parameters, ", fmt(bytes), " of ", dtype_name(c.precision.dtype), " values per rank",
          shards > 1 ? str(" (1/", shards, " at ZeRO stage 3)") : std::string(),
          ", more than this machine's memory (",
          c.device.is_cuda() ? str(fmt(device), " on ", to_string(c.device), " + ") : "", fmt(host),
          " of host memory)"));
}

}  // namespace zt::train
