// Optimizer benchmark: AdamW over N parameters as the ZeRO engine runs it (f32 master and moments,
// bf16 gradient in, bf16 parameter copy out, one pass), on the CPU (OpenMP + SIMD) and, when a GPU
// is visible, on the GPU (fused multi-tensor kernel); each beside a bandwidth probe of the same
// machine measured in the same run (host: multithreaded STREAM triad and an in-place a = s*a + b;
// device: device-to-device copy), so the table shows the fraction of bandwidth reached. Bytes
// counted per parameter: 14 read (master, m, v: 4 each; grad 2) + 14 written (master, m, v; copy
// 2). On the GPU also LAMB (DeepSpeed FusedLamb semantics, its two passes; 40 bytes per parameter).
//   build/bin/optim_bench [--n 1e9] [--reps 5] [--isa best|scalar|avx2|avx512] [--no-cuda]
//                         [--peer torch.json] [--json out.json]
// --peer reads bench/torch_adamw_peer.py's JSON line (same N) and prints the speedup over torch's
// bare f32 step and over torch doing the same job (bf16 gradient in, bf16 parameter out).
#include <omp.h>
#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>

#include "bench/bench_harness.h"
#include "zerotrain/core/half.h"
#include "zerotrain/core/tensor.h"
#include "zerotrain/optim/cpu/driver.h"
#include "zerotrain/optim/optimizers.h"

namespace zt::bench {
namespace {

constexpr double kBytesPerParam = 28.0;

struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};
using HostBuffer = std::unique_ptr<void, FreeDeleter>;

HostBuffer host_alloc(size_t bytes) {
  void* p = std::aligned_alloc(4096, (bytes + 4095) / 4096 * 4096);
  if (!p) throw std::bad_alloc();
  return HostBuffer(p);
}

float pseudo_random(int64_t i, uint64_t seed) {
  uint64_t x = (static_cast<uint64_t>(i) + 1) * 0x9E3779B97F4A7C15ull ^ seed;
  x ^= x >> 31;
  x *= 0x94D049BB133111EBull;
  x ^= x >> 29;
  return static_cast<float>(x >> 40) / 16777216.0f - 0.5f;
}

// First touch in the optimizer's own static block split, so each thread's pages are local to it.
template <class Fn>
void for_blocks_like_optimizer(int64_t n, Fn&& fn) {
  const int64_t blocks = (n + optim::cpu::kBlock - 1) / optim::cpu::kBlock;
#pragma omp parallel for schedule(static)
  for (int64_t b = 0; b < blocks; ++b)
    for (int64_t i = b * optim::cpu::kBlock; i < std::min(n, (b + 1) * optim::cpu::kBlock); ++i)
      fn(i);
}

struct HostProbe {
  double triad_gbps = 0;
  double update_gbps = 0;
  double best() const { return std::max(triad_gbps, update_gbps); }
};

// Multithreaded bandwidth on arrays of `n` floats: triad a = b + s c (12 bytes per element, the
// STREAM count) and in place a = s a + b (12 bytes, no write-allocate, like the optimizer).
HostProbe host_bandwidth(int64_t n, int reps) {
  HostBuffer a = host_alloc(static_cast<size_t>(n) * 4), b = host_alloc(static_cast<size_t>(n) * 4),
             c = host_alloc(static_cast<size_t>(n) * 4);
  float* pa = static_cast<float*>(a.get());
  float* pb = static_cast<float*>(b.get());
  float* pc = static_cast<float*>(c.get());
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i)
    pa[i] = 0.0f, pb[i] = 1.0f, pc[i] = 2.0f;
  const double bytes = 12.0 * static_cast<double>(n);
  HostProbe out;
  const double triad = time_ms(
      [&] {
#pragma omp parallel for schedule(static)
        for (int64_t i = 0; i < n; ++i)
          pa[i] = pb[i] + 0.5f * pc[i];
      },
      Stream{}, 1, reps);
  const double update = time_ms(
      [&] {
#pragma omp parallel for schedule(static)
        for (int64_t i = 0; i < n; ++i)
          pa[i] = 0.5f * pa[i] + pb[i];
      },
      Stream{}, 1, reps);
  out.triad_gbps = bytes / (triad * 1e-3) / 1e9;
  out.update_gbps = bytes / (update * 1e-3) / 1e9;
  return out;
}

double cpu_adamw_ms(int64_t n, optim::CpuIsa isa, int reps) {
  HostBuffer master = host_alloc(static_cast<size_t>(n) * 4),
             m = host_alloc(static_cast<size_t>(n) * 4), v = host_alloc(static_cast<size_t>(n) * 4),
             grad = host_alloc(static_cast<size_t>(n) * 2),
             copy = host_alloc(static_cast<size_t>(n) * 2);
  auto* pm = static_cast<float*>(master.get());
  auto* pe = static_cast<float*>(m.get());
  auto* pv = static_cast<float*>(v.get());
  auto* pg = static_cast<bf16*>(grad.get());
  auto* pc = static_cast<bf16*>(copy.get());
  for_blocks_like_optimizer(n, [&](int64_t i) {
    pm[i] = pseudo_random(i, 1);
    pe[i] = 0.0f;
    pv[i] = 0.0f;
    pg[i] = bf16(pseudo_random(i, 2) * 1e-2f);
    pc[i] = bf16(0.0f);
  });
  optim::AdamSegment s{pm, pe, pv, pg, DType::bf16, pc, DType::bf16, n, 0.01f};
  int64_t step = 0;
  return time_ms(
      [&] {
        optim::adam_step({&s, 1}, optim::AdamParams{}, {++step, 1.0f, isa});
      },
      Stream{}, 2, reps);
}

struct GpuResult {
  double adamw_ms = 0, lamb_ms = 0, copy_gbps = 0;
};

// LAMB's bytes per parameter on the GPU: pass 1 reads master, m, v (4 each) and the bf16 grad and
// writes m, v; pass 2 reads master, m, v and writes master and the bf16 copy.
constexpr double kLambBytesPerParam = 14.0 + 8.0 + 12.0 + 6.0;

GpuResult gpu_adamw(int64_t n, int reps) {
  const Device dev = Device::cuda(0);
  const Stream s = Stream::default_for(dev);
  Tensor master = Tensor::zeros({n}, DType::f32, dev, s),
         m = Tensor::zeros({n}, DType::f32, dev, s), v = Tensor::zeros({n}, DType::f32, dev, s),
         grad = Tensor::zeros({n}, DType::bf16, dev, s),
         copy = Tensor::zeros({n}, DType::bf16, dev, s);
  grad.fill(1e-3, s);
  master.fill(0.5, s);
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
  GpuResult r;
  r.adamw_ms = time_ms(
      [&] {
        optim::adam_step({&shard, 1}, optim::AdamParams{}, {++step, 1.0f}, dev, s);
      },
      s, 2, reps);
  step = 0;
  r.lamb_ms = time_ms(
      [&] {
        optim::lamb_step({&shard, 1}, optim::LambParams{}, {++step, 1.0f}, dev, s);
      },
      s, 2, reps);
  // Copy probe over the same number of bytes the step moves: 14 bytes per parameter each way.
  const int64_t words = n * 14 / 4;
  Tensor src = Tensor::zeros({words}, DType::f32, dev, s),
         dst = Tensor::zeros({words}, DType::f32, dev, s);
  const double copy_ms = time_ms([&] { dst.copy_from(src, s); }, s, 2, reps);
  r.copy_gbps = 2.0 * 4.0 * static_cast<double>(words) / (copy_ms * 1e-3) / 1e9;
  return r;
}

optim::CpuIsa parse_isa(const std::string& name) {
  for (optim::CpuIsa isa :
       {optim::CpuIsa::best, optim::CpuIsa::scalar, optim::CpuIsa::avx2, optim::CpuIsa::avx512})
    if (name == optim::cpu_isa_name(isa)) return isa;
  throw ValueError("optim_bench", str("--isa ", name, ": expected best, scalar, avx2 or avx512"));
}

int run(int argc, char** argv) {
  CLI::App app{"Optimizer benchmark: AdamW bf16 grad -> bf16 param on CPU and GPU vs bandwidth"};
  double n_arg = 1e9;
  int reps = 5;
  std::string isa_name = "best", json_path, peer_path, commit = ZT_GIT_COMMIT;
  bool no_cuda = false;
  app.add_option("--n", n_arg, "number of parameters (default 1e9)");
  app.add_option("--reps", reps, "timed repetitions (median reported)");
  app.add_option("--isa", isa_name, "CPU code path: best, scalar, avx2 or avx512");
  app.add_flag("--no-cuda", no_cuda, "skip the GPU even when one is visible");
  app.add_option("--peer", peer_path, "JSON line of bench/torch_adamw_peer.py for the same N");
  app.add_option("--json", json_path, "also write the JSON to this file");
  app.add_option("--commit", commit, "commit recorded in the JSON (default: the build's)");
  CLI11_PARSE(app, argc, argv);
  const auto n = static_cast<int64_t>(n_arg);
  if (n < 1) throw ValueError("optim_bench", str("--n ", n_arg, ": must be >= 1"));
  optim::CpuIsa isa = parse_isa(isa_name);
  if (isa == optim::CpuIsa::best) isa = optim::best_cpu_isa();
  const double bytes = kBytesPerParam * static_cast<double>(n);

  const HostProbe probe = host_bandwidth(std::min<int64_t>(n, int64_t{1} << 28), reps);
  const double cpu_ms = cpu_adamw_ms(n, isa, reps);
  const double cpu_gbps = bytes / (cpu_ms * 1e-3) / 1e9;
  nlohmann::json j = {{"bench", "optim_bench"},
                      {"commit", commit},
                      {"n", n},
                      {"threads", omp_get_max_threads()},
                      {"cpu",
                       {{"isa", optim::cpu_isa_name(isa)},
                        {"seconds", cpu_ms * 1e-3},
                        {"params_per_s", static_cast<double>(n) / (cpu_ms * 1e-3)},
                        {"gbps", cpu_gbps},
                        {"triad_gbps", probe.triad_gbps},
                        {"inplace_gbps", probe.update_gbps},
                        {"fraction_of_bandwidth", cpu_gbps / probe.best()}}}};
  std::printf("%-26s %12s %14s %10s %12s %9s\n", "what", "seconds", "params/s", "GB/s", "bandwidth",
              "fraction");
  std::printf("%-26s %12.4f %14.3e %10.1f %12.1f %9.3f\n",
              str("cpu adamw bf16 (", optim::cpu_isa_name(isa), ")").c_str(), cpu_ms * 1e-3,
              static_cast<double>(n) / (cpu_ms * 1e-3), cpu_gbps, probe.best(),
              cpu_gbps / probe.best());
  std::printf("%-26s %12s %14s %10.1f\n", "host triad", "", "", probe.triad_gbps);
  std::printf("%-26s %12s %14s %10.1f\n", "host in-place a=s*a+b", "", "", probe.update_gbps);
  if (!peer_path.empty()) {
    std::ifstream f(peer_path);
    if (!f) throw ValueError("optim_bench", str("--peer ", peer_path, ": cannot open"));
    const nlohmann::json peer = nlohmann::json::parse(f);
    const double torch_s = peer.at("seconds").get<double>();
    j["torch"] = peer;
    j["cpu"]["speedup_vs_torch"] = torch_s / (cpu_ms * 1e-3);
    std::printf("%-26s %12.4f %14.3e %10s %12s %9s   speedup %.2fx\n",
                str("torch ", peer.value("impl", std::string("?"))).c_str(), torch_s,
                static_cast<double>(n) / torch_s, "", "", "", torch_s / (cpu_ms * 1e-3));
    if (peer.contains("same_job_seconds")) {  // bf16 grad upcast + f32 step + bf16 copy, in torch
      const double same_s = peer.at("same_job_seconds").get<double>();
      j["cpu"]["speedup_vs_torch_same_job"] = same_s / (cpu_ms * 1e-3);
      std::printf("%-26s %12.4f %14.3e %10s %12s %9s   speedup %.2fx\n", "torch same job (bf16 io)",
                  same_s, static_cast<double>(n) / same_s, "", "", "", same_s / (cpu_ms * 1e-3));
    }
  }
  if (!no_cuda && cuda_available()) {
    const GpuResult g = gpu_adamw(n, reps);
    const double gbps = bytes / (g.adamw_ms * 1e-3) / 1e9;
    j["gpu"] = {{"seconds", g.adamw_ms * 1e-3},
                {"params_per_s", static_cast<double>(n) / (g.adamw_ms * 1e-3)},
                {"gbps", gbps},
                {"copy_gbps", g.copy_gbps},
                {"fraction_of_bandwidth", gbps / g.copy_gbps}};
    std::printf("%-26s %12.5f %14.3e %10.1f %12.1f %9.3f\n", "gpu adamw bf16 (fused)",
                g.adamw_ms * 1e-3, static_cast<double>(n) / (g.adamw_ms * 1e-3), gbps, g.copy_gbps,
                gbps / g.copy_gbps);
    const double lamb_gbps = kLambBytesPerParam * static_cast<double>(n) / (g.lamb_ms * 1e-3) / 1e9;
    j["gpu_lamb"] = {{"seconds", g.lamb_ms * 1e-3},
                     {"params_per_s", static_cast<double>(n) / (g.lamb_ms * 1e-3)},
                     {"gbps", lamb_gbps},
                     {"fraction_of_bandwidth", lamb_gbps / g.copy_gbps}};
    std::printf("%-26s %12.5f %14.3e %10.1f %12.1f %9.3f\n", "gpu lamb bf16 (two passes)",
                g.lamb_ms * 1e-3, static_cast<double>(n) / (g.lamb_ms * 1e-3), lamb_gbps,
                g.copy_gbps, lamb_gbps / g.copy_gbps);
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
