// zerotrain command line: wires the subcommands and is the one place that maps errors to exit codes.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>

#include "zerotrain/core/error.h"

int main(int argc, char** argv) {
  CLI::App app{"zerotrain: ZeRO sharded data-parallel training of transformer language models"};
  app.require_subcommand(0, 1);
  CLI11_PARSE(app, argc, argv);
  try {
    if (app.get_subcommands().empty()) {
      std::fputs(app.help().c_str(), stdout);
      return 0;
    }
  } catch (const zt::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "[zerotrain] %s\n", e.what());
    return 1;
  }
  return 0;
}
