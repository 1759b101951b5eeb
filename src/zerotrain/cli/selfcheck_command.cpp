// `zerotrain selfcheck`: the runtime self-check as a table, exit code 1 when any check fails.
#include <cstdio>

#include "zerotrain/cli/commands.h"
#include "zerotrain/core/device.h"
#include "zerotrain/selfcheck/selfcheck.h"

namespace zt::cli {

void add_selfcheck_command(CLI::App& app, std::function<int()>& action) {
  auto* cmd =
      app.add_subcommand("selfcheck",
                         "Check every kernel: backward against finite differences on the CPU, "
                         "and CUDA against CPU when a GPU is visible");
  auto opt = std::make_shared<selfcheck::Options>();
  auto device = std::make_shared<std::string>("all");
  cmd->add_option("--device", *device, "cpu, cuda or all")
      ->check(CLI::IsMember({"cpu", "cuda", "all"}));
  cmd->add_option("--seed", opt->seed, "random seed for the inputs");
  cmd->footer("Examples:\n  zerotrain selfcheck\n  zerotrain selfcheck --device cuda --seed 7");
  cmd->callback([&action, opt, device] {
    action = [opt, device] {
      opt->cpu = *device != "cuda";
      opt->cuda = *device != "cpu";
      std::printf("zerotrain selfcheck (%s)\n",
                  cuda_available() ? "CPU + CUDA" : "CPU only: no CUDA device");
      std::printf("%-16s %-22s %12s %12s  %s\n", "op", "check", "error", "tolerance", "result");
      int failed = 0, total = 0;
      selfcheck::run_all(*opt, [&](const selfcheck::Result& r) {
        ++total;
        failed += r.passed() ? 0 : 1;
        std::printf("%-16s %-22s %12.3e %12.1e  %s\n", r.op.c_str(), r.check.c_str(), r.error,
                    r.tolerance, r.passed() ? "ok" : "FAILED");
        std::fflush(stdout);
      });
      std::printf("%d of %d checks passed\n", total - failed, total);
      return failed ? 1 : 0;
    };
  });
}

}  // namespace zt::cli
