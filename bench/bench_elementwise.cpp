// Bandwidth of the elementwise kernels and reductions on one GPU, against a device-to-device copy
// of the same tensor (the memory-bandwidth ceiling). Each row times `--iters` runs with CUDA events
// after warm-up and reports the median; bytes count every input read once and every output written
// once. Prints a table, then the rows as JSON (also to --json PATH).
// Run: bench_elementwise [--rows 4096] [--cols 14336] [--iters 50] [--json out.json]
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "zerotrain/core/device.h"
#include "zerotrain/core/stream.h"
#include "zerotrain/core/tensor.h"
#include "zerotrain/kernels/elementwise.h"
#include "zerotrain/kernels/reduce.h"

namespace {

using zt::DType;
using zt::Tensor;

// Uniform in [-2, 2) from a fixed LCG: never zeros, identical run to run.
Tensor filled(const zt::Shape& shape, DType dtype, uint64_t seed, zt::Device d) {
  std::vector<float> v(static_cast<size_t>(zt::numel_of(shape)));
  uint64_t s = seed * 6364136223846793005ULL + 1442695040888963407ULL;
  for (float& x : v) {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    x = static_cast<float>(s >> 40) / static_cast<float>(1 << 24) * 4.0f - 2.0f;
  }
  return Tensor::from_floats(v, shape, dtype, d);
}

double median_ms(const std::function<void()>& body, int iters, zt::Device d) {
  for (int i = 0; i < 3; ++i)
    body();
  std::vector<double> ms;
  zt::CudaEvent start(d, true), stop(d, true);
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

}  // namespace

int main(int argc, char** argv) {
  int64_t rows = 4096, cols = 14336;
  int iters = 50;
  std::string json_path;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i];
    if (k == "--rows")
      rows = std::stoll(argv[i + 1]);
    else if (k == "--cols")
      cols = std::stoll(argv[i + 1]);
    else if (k == "--iters")
      iters = std::stoi(argv[i + 1]);
    else if (k == "--json")
      json_path = argv[i + 1];
  }
  if (!zt::cuda_available()) {
    std::printf("bench_elementwise: no CUDA device, nothing to measure\n");
    return 0;
  }
  const zt::Device gpu = zt::Device::cuda(0);
  const int64_t n = rows * cols;
  nlohmann::json out = nlohmann::json::array();
  std::printf("%-22s %-5s %14s %10s %10s %8s\n", "op", "dtype", "elements", "ms", "GB/s",
              "vs copy");
  for (DType dtype : {DType::bf16, DType::f32}) {
    const double es = static_cast<double>(zt::dtype_size(dtype));
    Tensor a = filled({n}, dtype, 1, gpu), b = filled({n}, dtype, 2, gpu),
           c = filled({n}, dtype, 3, gpu);
    Tensor o1 = Tensor::empty({n}, dtype, gpu), o2 = Tensor::empty({n}, dtype, gpu);
    Tensor scalar = Tensor::empty({1}, DType::f32, gpu),
           colsum = Tensor::empty({cols}, DType::f32, gpu);
    std::vector<Tensor> small;  // 300 tensors of 1..50k elements: the launch-count path
    for (int i = 0; i < 300; ++i)
      small.push_back(filled({1 + (i * 7919) % 50000}, dtype, 10 + i, gpu));
    double small_elems = 0;
    for (const Tensor& t : small)
      small_elems += static_cast<double>(t.numel());
    struct Row {
      std::string name;
      int tensors_moved;  // inputs + outputs of n elements
      std::function<void()> body;
    };
    namespace k = zt::kernels;
    const std::vector<Row> table = {
        {"copy (d2d)", 2, [&] { o1.copy_from(a); }},
        {"add", 3, [&] { k::add(a, b, o1, 0.5f); }},
        {"mul", 3, [&] { k::mul(a, b, o1); }},
        {"scale", 2, [&] { k::scale(a, 0.5f, o1); }},
        {"gelu_tanh_forward", 2, [&] { k::gelu_tanh_forward(a, o1); }},
        {"gelu_tanh_backward", 3, [&] { k::gelu_tanh_backward(a, b, o1); }},
        {"silu_forward", 2, [&] { k::silu_forward(a, o1); }},
        {"silu_backward", 3, [&] { k::silu_backward(a, b, o1); }},
        {"swiglu_forward", 3, [&] { k::swiglu_forward(a, b, o1); }},
        {"swiglu_backward", 5, [&] { k::swiglu_backward(a, b, c, o1, o2); }},
        {"sum", 1, [&] { k::sum(a, scalar); }},
        {"max", 1, [&] { k::max(a, scalar); }},
        {"global_l2_norm", 1, [&] { k::global_l2_norm({a}, scalar); }},
        {"sum_rows", 1,
         [&] {
           k::sum_rows(a.view({rows, cols}), colsum);
         }},
    };
    double copy_gbs = 0;
    for (const Row& r : table) {
      const double ms = median_ms(r.body, iters, gpu);
      const double gbs = r.tensors_moved * static_cast<double>(n) * es / (ms * 1e6);
      if (r.name == "copy (d2d)") copy_gbs = gbs;
      std::printf("%-22s %-5s %14lld %10.4f %10.1f %7.1f%%\n", r.name.c_str(),
                  std::string(zt::dtype_name(dtype)).c_str(), static_cast<long long>(n), ms, gbs,
                  100 * gbs / copy_gbs);
      out.push_back({{"op", r.name},
                     {"dtype", zt::dtype_name(dtype)},
                     {"elements", n},
                     {"median_ms", ms},
                     {"gb_per_s", gbs},
                     {"fraction_of_copy", gbs / copy_gbs}});
    }
    const double ms = median_ms([&] { k::global_l2_norm(small, scalar); }, iters, gpu);
    const double gbs = small_elems * es / (ms * 1e6);
    std::printf("%-22s %-5s %14.0f %10.4f %10.1f %7.1f%%  (300 tensors)\n", "global_l2_norm",
                std::string(zt::dtype_name(dtype)).c_str(), small_elems, ms, gbs,
                100 * gbs / copy_gbs);
    out.push_back({{"op", "global_l2_norm x300"},
                   {"dtype", zt::dtype_name(dtype)},
                   {"elements", small_elems},
                   {"median_ms", ms},
                   {"gb_per_s", gbs},
                   {"fraction_of_copy", gbs / copy_gbs}});
  }
  std::printf("%s\n", out.dump().c_str());
  if (!json_path.empty()) std::ofstream(json_path) << out.dump(2) << "\n";
  return 0;
}
