// Low-precision vs mixed-precision AdamW step over N parameters, as the ZeRO engine runs each mode
// (optim/precision.h): mixed reads f32 master, m, v and a bf16 grad and writes master, m, v and the
// bf16 copy (28 bytes per parameter); low reads bf16 p, m, v and a bf16 grad and writes p, m, v
// (14 bytes). On the CPU (OpenMP + SIMD) and, when a GPU is visible, on the GPU. Prints a table
// (seconds, params/s, GB/s, optimizer-state bytes per parameter) and a JSON line.
//   build/bin/optim_lowp_bench [--n 1e8] [--reps 5] [--no-cuda] [--json out.json]
#include <CLI/CLI.hpp>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>

#include "bench/bench_harness.h"
#include "zerotrain/core/tensor.h"
#include "zerotrain/optim/low_precision.h"
#include "zerotrain/optim/optimizers.h"

namespace zt::bench {
namespace {

struct Result {
  std::string what;
  double ms = 0;
  double bytes_per_param = 0;
  int state_bytes_per_param = 0;
};

// Both steps on `device` over n parameters: p in [0.25, 0.75), a small gradient.
std::vector<Result> run_on(Device device, int64_t n, int reps) {
  const Stream s = device.is_cuda() ? Stream::default_for(device) : Stream{};
  auto make = [&](DType dt, double value) {
    Tensor t = Tensor::zeros({n}, dt, device, s);
    if (value != 0.0) t.fill(value, s);
    return t;
  };
  const Tensor grad = make(DType::bf16, 1e-3);
  std::vector<Result> out;
  {
    const Tensor master = make(DType::f32, 0.5), m = make(DType::f32, 0), v = make(DType::f32, 0),
                 copy = make(DType::bf16, 0);
    optim::AdamSegment shard{static_cast<float*>(master.data()),
                             static_cast<float*>(m.data()),
                             static_cast<float*>(v.data()),
                             grad.data(),
                             DType::bf16,
                             copy.data(),
                             DType::bf16,
                             n,
                             0.01f};
    int64_t step = 0;
    const double ms = time_ms(
        [&] {
          optim::adam_step({&shard, 1}, optim::AdamParams{}, {++step, 1.0f}, device, s);
        },
        s, 2, reps);
    out.push_back({"mixed (f32 masters)", ms, 28.0, 12});
  }
  {
    const Tensor p = make(DType::bf16, 0.5), m = make(DType::bf16, 0), v = make(DType::bf16, 0);
    optim::AdamSegmentLowp shard{static_cast<bf16*>(p.data()),
                                 static_cast<bf16*>(m.data()),
                                 static_cast<bf16*>(v.data()),
                                 grad.data(),
                                 DType::bf16,
                                 n,
                                 0.01f};
    int64_t step = 0;
    const double ms = time_ms(
        [&] {
          optim::adam_step_lowp({&shard, 1}, optim::AdamParams{}, {++step, 1.0f}, device, s);
        },
        s, 2, reps);
    out.push_back({"low (bf16 in place)", ms, 14.0, 4});
  }
  return out;
}

int run(int argc, char** argv) {
  CLI::App app{"AdamW step: low precision (bf16 in place) vs mixed precision (f32 masters)"};
  double n_arg = 1e8;
  int reps = 5;
  bool no_cuda = false;
  std::string json_path, commit = ZT_GIT_COMMIT;
  app.add_option("--n", n_arg, "number of parameters (default 1e8)");
  app.add_option("--reps", reps, "timed repetitions (median reported)");
  app.add_flag("--no-cuda", no_cuda, "skip the GPU even when one is visible");
  app.add_option("--json", json_path, "also write the JSON to this file");
  app.add_option("--commit", commit, "commit recorded in the JSON (default: the build's)");
  CLI11_PARSE(app, argc, argv);
  const auto n = static_cast<int64_t>(n_arg);
  if (n < 1) throw ValueError("optim_lowp_bench", str("--n ", n_arg, ": must be >= 1"));
  nlohmann::json j = {{"bench", "optim_lowp_bench"}, {"commit", commit}, {"n", n}};
  std::printf("%-8s %-22s %12s %14s %10s %14s\n", "device", "mode", "seconds", "params/s", "GB/s",
              "state B/param");
  std::vector<Device> devices = {Device::cpu()};
  if (!no_cuda && cuda_available()) devices.push_back(Device::cuda(0));
  for (const Device& d : devices)
    for (const Result& r : run_on(d, n, reps)) {
      const double sec = r.ms * 1e-3, gbps = r.bytes_per_param * static_cast<double>(n) / sec / 1e9;
      std::printf("%-8s %-22s %12.5f %14.3e %10.1f %14d\n", to_string(d).c_str(), r.what.c_str(),
                  sec, static_cast<double>(n) / sec, gbps, r.state_bytes_per_param);
      j["results"].push_back({{"device", to_string(d)},
                              {"mode", r.what},
                              {"seconds", sec},
                              {"params_per_s", static_cast<double>(n) / sec},
                              {"gbps", gbps},
                              {"state_bytes_per_param", r.state_bytes_per_param}});
    }
  std::printf("%s\n", j.dump().c_str());
  if (!json_path.empty()) std::ofstream(json_path) << j.dump(2) << "\n";
  return 0;
}

}  // namespace
}  // namespace zt::bench

int main(int argc, char** argv) {
  return zt::bench::run_main(zt::bench::run, argc, argv);
}
