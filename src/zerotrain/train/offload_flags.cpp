// apply_offload_flags / check_offload_flags (offload_flags.h).
#include "zerotrain/train/offload_flags.h"

#include "zerotrain/core/error.h"

namespace zt::train {

namespace {

using config::OffloadDevice;

OffloadDevice device_of(const std::string& name, const char* flag) {
  for (OffloadDevice d : {OffloadDevice::none, OffloadDevice::cpu, OffloadDevice::nvme})
    if (config::offload_device_name(d) == name) return d;
  throw ValueError("config", str(flag, " ", name, ": must be none, cpu or nvme"));
}

[[noreturn]] void fail(const char* key, const std::string& why) {
  throw ValueError("config", str("zero_optimization.", key, ": ", why));
}

}  // namespace

void apply_offload_flags(const OffloadFlags& f, zero::ZeroConfig& z) {
  zero::OffloadPolicy& p = z.offload;
  p.optimizer.device = device_of(f.optimizer, "--offload-optimizer");
  p.params.device = device_of(f.params, "--offload-param");
  for (zero::OffloadTarget* t : {static_cast<zero::OffloadTarget*>(&p.optimizer),
                                 static_cast<zero::OffloadTarget*>(&p.params)}) {
    t->nvme_path = f.nvme_path;
    t->pin_memory = f.pin_memory;
  }
  p.sub_group_size = f.sub_group_size;
}

void check_offload_flags(const zero::ZeroConfig& z, const config::GivenFlags& given) {
  const zero::OffloadPolicy& p = z.offload;
  const std::string opt = config::offload_device_name(p.optimizer.device);
  const std::string par = config::offload_device_name(p.params.device);
  if (p.params.device != OffloadDevice::none && z.stage != 3)
    fail("offload_param.device",
         str("--offload-param ", par, " needs --zero-stage 3 (zero_optimization.stage), got ",
             z.stage));
  if (p.optimizer.device != OffloadDevice::none && z.stage == 0)
    fail("offload_optimizer.device",
         str("--offload-optimizer ", opt,
             " needs --zero-stage 1, 2 or 3 (zero_optimization.stage), got 0"));
  const bool nvme =
      p.optimizer.device == OffloadDevice::nvme || p.params.device == OffloadDevice::nvme;
  if (given.contains("--nvme-path") && !nvme)
    fail("offload_optimizer.nvme_path",
         str("--nvme-path ", p.optimizer.nvme_path,
             " is given but neither --offload-optimizer nor --offload-param is nvme "
             "(offload_optimizer.device ",
             opt, ", offload_param.device ", par, ")"));
  if (nvme && p.optimizer.nvme_path.empty())
    fail(p.optimizer.device == OffloadDevice::nvme ? "offload_optimizer.nvme_path"
                                                   : "offload_param.nvme_path",
         "device nvme needs a directory to swap to: give --nvme-path DIR");
  const bool offloaded =
      p.optimizer.device != OffloadDevice::none || p.params.device != OffloadDevice::none;
  if (given.contains("--pin-memory") && !offloaded)
    fail("offload_optimizer.pin_memory",
         "--pin-memory is given but nothing is offloaded (--offload-optimizer and "
         "--offload-param are none)");
}

}  // namespace zt::train
