// Timing harness for bench/ programs: times a callable on a device (CUDA events or the host
// clock), keeps the median of repeated runs, and collects rows for the table and the JSON report.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "zerotrain/core/stream.h"

namespace zt::bench {

struct Row {
  std::string kernel;  // "gemm", "rmsnorm_fwd", ...
  std::string shape;   // "4096x4096x4096"
  std::string dtype;
  double ms = 0;     // median time per call
  double bytes = 0;  // bytes read + written per call (0 when compute-bound)
  double flops = 0;  // floating-point operations per call (0 when memory-bound)
  double gbps() const { return bytes > 0 ? bytes / (ms * 1e-3) / 1e9 : 0; }
  double tflops() const { return flops > 0 ? flops / (ms * 1e-3) / 1e12 : 0; }
};

// Median milliseconds of `fn` over `reps` timed runs after `warmup` untimed ones. On CUDA the runs
// are queued back to back, each between two events, and the stream is synchronized once at the end:
// the host's launch work overlaps the previous run, as in a training step, so a run's time is the
// GPU's (a sync after each run would add the launch latency, tens of microseconds for a cuDNN graph,
// to every run). On the host each run is timed by a steady clock.
inline double time_ms(const std::function<void()>& fn, Stream stream, int warmup = 3,
                      int reps = 10) {
  for (int i = 0; i < warmup; ++i)
    fn();
  synchronize(stream);
  std::vector<double> t;
  if (stream.device.is_cuda()) {
    std::vector<CudaEvent> starts, ends;
    for (int i = 0; i < reps; ++i) {
      starts.emplace_back(stream.device, true);
      ends.emplace_back(stream.device, true);
    }
    for (int i = 0; i < reps; ++i) {
      starts[i].record(stream);
      fn();
      ends[i].record(stream);
    }
    ends.back().synchronize();
    for (int i = 0; i < reps; ++i)
      t.push_back(ends[i].elapsed_ms(starts[i]));
  } else {
    for (int i = 0; i < reps; ++i) {
      auto a = std::chrono::steady_clock::now();
      fn();
      auto b = std::chrono::steady_clock::now();
      t.push_back(std::chrono::duration<double, std::milli>(b - a).count());
    }
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

inline void print_table(const std::vector<Row>& rows) {
  std::printf("%-22s %-24s %-6s %11s %11s %11s\n", "kernel", "shape", "dtype", "time (ms)", "GB/s",
              "TFLOP/s");
  for (const auto& r : rows) {
    std::printf("%-22s %-24s %-6s %11.4f", r.kernel.c_str(), r.shape.c_str(), r.dtype.c_str(),
                r.ms);
    if (r.bytes > 0)
      std::printf(" %11.1f", r.gbps());
    else
      std::printf(" %11s", "-");
    if (r.flops > 0)
      std::printf(" %11.3f", r.tflops());
    else
      std::printf(" %11s", "-");
    std::printf("\n");
  }
}

inline nlohmann::json to_json(const Row& r) {
  nlohmann::json j = {{"kernel", r.kernel}, {"shape", r.shape}, {"dtype", r.dtype}, {"ms", r.ms}};
  if (r.bytes > 0) j["gbps"] = r.gbps();
  if (r.flops > 0) j["tflops"] = r.tflops();
  return j;
}

// A bench's main(): runs `run`, and an exception becomes one line on stderr and exit status 1.
inline int run_main(int (*run)(int, char**), int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}

}  // namespace zt::bench
