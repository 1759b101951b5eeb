// zerotrain command line: wires the subcommands and is the one place that maps errors to exit codes
// (0 success, 1 a check or run failed or a zerotrain error, 2 bad command line).
#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "zerotrain/cli/command_line_guards.h"
#include "zerotrain/cli/commands.h"
#include "zerotrain/comm/agreed_checks.h"
#include "zerotrain/core/error.h"

using zt::cli::refuse_integer_overflow;
using zt::cli::unknown_command;

int main(int argc, char** argv) {
  CLI::App app{"zerotrain: ZeRO sharded data-parallel training of transformer language models"};
  app.require_subcommand(1);
  app.footer(
      "Run `zerotrain <command> --help` for a command's options and examples.\n\n"
      "A first run:\n"
      "  zerotrain selfcheck\n"
      "  zerotrain data prepare --tokenizer tokenizer.json --input corpus.txt --output data.bin\n"
      "  zerotrain train --model config.json --data data.bin --out runs/first --steps 200\n"
      "  zerotrain generate --model runs/first/model --tokenizer tokenizer.json --prompt \"And God "
      "said\"");
  std::function<int()> action;
  zt::cli::add_selfcheck_command(app, action);
  zt::cli::add_data_command(app, action);
  zt::cli::add_train_command(app, action, std::vector<std::string>(argv + 1, argv + argc));
  zt::cli::add_launch_command(app, action);
  zt::cli::add_estimate_command(app, action);
  zt::cli::add_config_command(app, action);
  zt::cli::add_checkpoint_command(app, action);
  zt::cli::add_generate_command(app, action);
  refuse_integer_overflow(app);
  if (argc > 1)
    if (const std::optional<std::string> unknown = unknown_command(app, argv[1])) {
      std::fprintf(stderr, "%s\n", unknown->c_str());
      return 2;
    }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version are successes; every other parse error is a bad command line.
    return app.exit(e) == 0 ? 0 : 2;
  }
  try {
    return action ? action() : 0;
  } catch (const zt::comm::ErrorReported&) {
    return 1;  // another rank, or this one, printed it ([Note: one line per error across ranks])
  } catch (const zt::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "[zerotrain] unexpected error: %s\n", e.what());
    return 1;
  }
}
