// Subcommand registration: each add_*_command adds its subcommand to the app and, when parsed,
// stores the work to run in `action` (returning the exit code). main() runs it inside the one
// try/catch that maps errors to exit codes.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

namespace zt::cli {

void add_selfcheck_command(CLI::App& app, std::function<int()>& action);
void add_data_command(CLI::App& app, std::function<int()>& action);
// args: the command line after the program name (train re-runs it under `zerotrain launch` for
// --nproc).
void add_train_command(CLI::App& app, std::function<int()>& action,
                       const std::vector<std::string>& args);
void add_launch_command(CLI::App& app, std::function<int()>& action);
void add_estimate_command(CLI::App& app, std::function<int()>& action);
void add_config_command(CLI::App& app, std::function<int()>& action);
void add_checkpoint_command(CLI::App& app, std::function<int()>& action);
void add_generate_command(CLI::App& app, std::function<int()>& action);

}  // namespace zt::cli
