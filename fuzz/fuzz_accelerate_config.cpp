// libFuzzer target: an Accelerate config file (YAML) through config::parse_accelerate_config and,
// when it reads, the ds_config it becomes (config::accelerate_ds_config, with --dtype bf16 given
// for FSDP's loaded-dtype rule) through the ds_config loader. Any input must read or throw a
// zt::Error; see docs/fuzzing.md.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "zerotrain/config/accelerate_ds_config.h"
#include "zerotrain/config/load.h"
#include "zerotrain/core/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  zt::config::ConfigOverrides overrides;
  overrides.hidden_size = 64;
  overrides.micro_batch = 2;
  overrides.grad_accum = 1;
  overrides.clip = 1.0;
  try {
    const zt::config::AccelerateConfig a =
        zt::config::parse_accelerate_config(text, "fuzz.yaml", "/nonexistent");
    overrides.world_size = a.ranks.num_processes;
    const zt::config::AccelerateRun run = zt::config::accelerate_ds_config(a, "bf16");
    zt::config::parse_ds_config(run.ds_config.dump(), run.ds_source, overrides);
  } catch (const zt::Error&) {
  }
  return 0;
}
