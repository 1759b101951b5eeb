// The flags a user typed on a subcommand, as config::GivenFlags: every option counted, so that
// every flag that maps to a ds_config key gets the fill/conflict check (config/resolve_auto.h).
// Tested by the CLI ctest train_zero_stage_flag_fills_ds_config (tests/CMakeLists.txt).
#pragma once

#include <CLI/CLI.hpp>

#include "zerotrain/config/overrides.h"

namespace zt::cli {

// Each option of `cmd` given at least once, by its long name ("--zero-stage").
config::GivenFlags given_flags(const CLI::App& cmd);

}  // namespace zt::cli
