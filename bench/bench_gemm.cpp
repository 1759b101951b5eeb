// GEMM throughput through kernels::gemm (cuBLASLt): bf16/f16/f32 square products with and without
// the bias epilogue on random operands (C = A B^T, the nn.Linear layout), timed with CUDA events
// after warm-up, plus the host time to queue one call. Prints a table and writes JSON; the
// acceptance check is bf16 4096^3 at >= 90% of bf16 8192^3.
//   ./build/bin/bench_gemm [out.json]
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "zerotrain/core/stream.h"
#include "zerotrain/core/tensor.h"
#include "zerotrain/kernels/gemm.h"

namespace {

using namespace zt;

struct Result {
  std::string dtype;
  int64_t size;
  bool bias;
  double ms;
  double tflops;
  double host_us;  // host time to queue one call
};

// Uniform values in [-1, 1) on the GPU: random bits keep the power draw, hence the clocks, honest.
Tensor random_on_gpu(int64_t rows, int64_t cols, DType dt, uint32_t seed, Stream stream) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(static_cast<size_t>(rows * cols));
  for (float& x : v)
    x = dist(rng);
  return Tensor::from_floats(v, {rows, cols}, dt).to(Device::cuda(0), stream);
}

Result time_gemm(DType dt, int64_t s, bool with_bias, Stream stream) {
  const Device gpu = Device::cuda(0);
  Tensor a = random_on_gpu(s, s, dt, 1, stream);
  Tensor b = random_on_gpu(s, s, dt, 2, stream);
  Tensor c = Tensor::empty({s, s}, dt, gpu, stream);
  Tensor bias = random_on_gpu(1, s, dt, 3, stream).view({s});
  kernels::GemmOptions opt;
  opt.trans_b = true;
  opt.bias = with_bias ? &bias : nullptr;
  const int warmup = 5, iters = s >= 8192 ? 20 : 50;
  for (int i = 0; i < warmup; ++i)
    kernels::gemm(a, b, c, opt, stream);
  CudaEvent start(gpu, true), stop(gpu, true);
  synchronize(stream);
  start.record(stream);
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < iters; ++i)
    kernels::gemm(a, b, c, opt, stream);
  const auto t1 = std::chrono::steady_clock::now();
  stop.record(stream);
  stop.synchronize();
  const double ms = stop.elapsed_ms(start) / iters;
  const double host_us = std::chrono::duration<double, std::micro>(t1 - t0).count() / iters;
  return {std::string(dtype_name(dt)),          s,      with_bias, ms,
          2.0 * s * s * s / (ms * 1e-3) / 1e12, host_us};
}

}  // namespace

int main(int argc, char** argv) {
  if (!cuda_available()) {
    std::fprintf(stderr, "bench_gemm: no CUDA device\n");
    return 1;
  }
  CudaStream stream(Device::cuda(0));
  std::vector<Result> results;
  for (DType dt : {DType::bf16, DType::f16, DType::f32})
    for (int64_t s : {1024, 2048, 4096, 8192})
      for (bool bias : {false, true})
        results.push_back(time_gemm(dt, s, bias, stream));

  std::printf("%-6s %6s %5s %10s %10s %10s\n", "dtype", "size", "bias", "ms", "TFLOP/s", "host us");
  nlohmann::json out = nlohmann::json::array();
  for (const Result& r : results) {
    std::printf("%-6s %6lld %5s %10.3f %10.1f %10.2f\n", r.dtype.c_str(),
                static_cast<long long>(r.size), r.bias ? "yes" : "no", r.ms, r.tflops, r.host_us);
    out.push_back({{"dtype", r.dtype},
                   {"m", r.size},
                   {"n", r.size},
                   {"k", r.size},
                   {"bias", r.bias},
                   {"ms", r.ms},
                   {"tflops", r.tflops},
                   {"host_us", r.host_us}});
  }
  auto rate = [&](int64_t s, bool bias) {
    for (const Result& r : results)
      if (r.dtype == "bf16" && r.size == s && r.bias == bias) return r.tflops;
    return 0.0;
  };
  const double ratio = rate(4096, false) / rate(8192, false);
  std::printf("bf16 4096^3 / 8192^3 rate: %.3f (target >= 0.90)\n", ratio);
  if (argc > 1) {
    std::ofstream(argv[1]) << nlohmann::json{{"results", out}, {"bf16_4096_over_8192", ratio}}.dump(
                                  2)
                           << "\n";
  }
  return 0;
}
