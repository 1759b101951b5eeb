// Bandwidth of the CUDA AdamW step against a device-to-device copy (the memory-bandwidth ceiling),
// for the mixed-precision layouts the engine uses. Each row is the median of `--iters` steps timed
// with CUDA events after warm-up; bytes count every buffer read once and every output written
// once. Prints a table, then the rows as JSON (also to --json PATH).
// Run: bench_adamw [--n 268435456] [--iters 20] [--json out.json]
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "zerotrain/core/device.h"
#include "zerotrain/core/stream.h"
#include "zerotrain/core/tensor.h"
#include "zerotrain/kernels/adamw.h"

namespace {

using zt::DType;
using zt::Tensor;

double median_ms(const std::function<void()>& body, int iters, zt::Device d) {
  for (int i = 0; i < 3; ++i)
    body();
  zt::CudaEvent start(d, true), stop(d, true);
  std::vector<double> ms;
  for (int i = 0; i < iters; ++i) {
    start.record({});
    body();
    stop.record({});
    stop.synchronize();
    ms.push_back(stop.elapsed_ms(start));
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

struct Layout {
  std::string name;
  DType param, grad, state;
  std::optional<DType> copy;
};

}  // namespace

int main(int argc, char** argv) {
  int64_t n = int64_t{1} << 28;
  int iters = 20;
  std::string json_path;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i];
    if (k == "--n")
      n = std::stoll(argv[i + 1]);
    else if (k == "--iters")
      iters = std::stoi(argv[i + 1]);
    else if (k == "--json")
      json_path = argv[i + 1];
  }
  if (!zt::cuda_available()) {
    std::printf("bench_adamw: no CUDA device, nothing to measure\n");
    return 0;
  }
  const zt::Device gpu = zt::Device::cuda(0);
  const std::vector<Layout> layouts = {
      {"f32 masters, f32 grads", DType::f32, DType::f32, DType::f32, std::nullopt},
      {"f32 masters, bf16 grads, bf16 copy", DType::f32, DType::bf16, DType::f32, DType::bf16},
      {"bf16 params and state", DType::bf16, DType::bf16, DType::bf16, std::nullopt},
  };
  nlohmann::json out = nlohmann::json::array();
  std::printf("%-36s %12s %10s %10s %8s\n", "layout", "elements", "ms", "GB/s", "vs copy");

  // The ceiling: copy of an f32 buffer of n elements (read + write).
  Tensor src = Tensor::zeros({n}, DType::f32, gpu), dst = Tensor::zeros({n}, DType::f32, gpu);
  const double copy_ms = median_ms([&] { dst.copy_from(src); }, iters, gpu);
  const double copy_gbs = 2.0 * 4.0 * static_cast<double>(n) / (copy_ms * 1e6);
  std::printf("%-36s %12lld %10.4f %10.1f %7.0f%%\n", "copy (d2d, f32)", static_cast<long long>(n),
              copy_ms, copy_gbs, 100.0);
  out.push_back(
      {{"op", "copy (d2d, f32)"}, {"elements", n}, {"ms", copy_ms}, {"gb_per_s", copy_gbs}});
  src = Tensor();
  dst = Tensor();

  for (const Layout& l : layouts) {
    Tensor param = Tensor::empty({n}, l.param, gpu), grad = Tensor::empty({n}, l.grad, gpu);
    Tensor m = Tensor::zeros({n}, l.state, gpu), v = Tensor::zeros({n}, l.state, gpu);
    param.fill(0.5);
    grad.fill(0.01);
    std::optional<Tensor> copy;
    if (l.copy) copy = Tensor::empty({n}, *l.copy, gpu);
    zt::kernels::AdamWParams hp;
    hp.weight_decay = 0.1f;
    const double ms = median_ms(
        [&] {
          zt::kernels::adamw_step(param, grad, m, v, hp, copy ? &*copy : nullptr);
          ++hp.step;
        },
        iters, gpu);
    const double ps = static_cast<double>(zt::dtype_size(l.param));
    const double ss = static_cast<double>(zt::dtype_size(l.state));
    const double per_elem = 2 * ps + static_cast<double>(zt::dtype_size(l.grad)) + 4 * ss +
                            (l.copy ? static_cast<double>(zt::dtype_size(*l.copy)) : 0.0);
    const double gbs = per_elem * static_cast<double>(n) / (ms * 1e6);
    std::printf("%-36s %12lld %10.4f %10.1f %7.0f%%\n", l.name.c_str(), static_cast<long long>(n),
                ms, gbs, 100 * gbs / copy_gbs);
    out.push_back({{"op", "adamw_step"},
                   {"layout", l.name},
                   {"elements", n},
                   {"ms", ms},
                   {"gb_per_s", gbs},
                   {"fraction_of_copy", gbs / copy_gbs}});
  }
  std::printf("%s\n", out.dump().c_str());
  if (!json_path.empty()) std::ofstream(json_path) << out.dump(2) << "\n";
  return 0;
}
