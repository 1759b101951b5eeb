// libFuzzer target: a ds_config.json through the whole loader (parse, deprecated keys, "auto"
// resolved from command-line values, section parsers, batch rule, cross-section checks) and, when
// it loads, the resolved config printed as JSON and loaded again. Any input must load or throw a
// zt::Error; see docs/fuzzing.md.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "zerotrain/config/load.h"
#include "zerotrain/core/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  zt::config::ConfigOverrides overrides;
  overrides.world_size = 2;
  overrides.hidden_size = 64;
  overrides.micro_batch = 2;
  overrides.grad_accum = 1;
  overrides.total_steps = 100;
  overrides.warmup_steps = 10;
  overrides.lr = 1e-4;
  try {
    const zt::config::LoadedConfig loaded =
        zt::config::parse_ds_config(text, "fuzz.json", overrides);
    const std::string printed = zt::config::ds_config_json(loaded.config);
    zt::config::parse_ds_config(printed, "printed.json", overrides);
  } catch (const zt::Error&) {
  }
  return 0;
}
