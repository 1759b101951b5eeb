// Bandwidth of the CUDA cross-entropy kernels against a device-to-device copy of the logits (the
// memory-bandwidth ceiling). Each row is the median of `--iters` runs timed with CUDA events after
// warm-up. "GB/s" counts the bytes the kernel's passes move (forward: one read of the logits;
// backward: a read and a write; fused: a read for the statistics, then a read and a write);
// "vs copy" is the copy's time over the op's time for the same logits, per byte moved.
// Prints a table, then the rows as JSON (also to --json PATH).
// Run: bench_cross_entropy [--rows 4096] [--vocab 128256] [--iters 20] [--json out.json]
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "zerotrain/core/device.h"
#include "zerotrain/core/stream.h"
#include "zerotrain/core/tensor.h"
#include "zerotrain/kernels/cross_entropy.h"

namespace {

using zt::DType;
using zt::Tensor;

// Logits in [-8, 8) and targets in [0, V) from a fixed LCG: identical run to run.
std::vector<float> lcg_floats(size_t n, uint64_t seed, float lo, float hi) {
  std::vector<float> v(n);
  uint64_t s = seed * 6364136223846793005ULL + 1442695040888963407ULL;
  for (float& x : v) {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    x = lo + (hi - lo) * static_cast<float>(s >> 40) / static_cast<float>(1 << 24);
  }
  return v;
}

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

}  // namespace

int main(int argc, char** argv) {
  int64_t rows = 4096, vocab = 128256;
  int iters = 20;
  std::string json_path;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i];
    if (k == "--rows")
      rows = std::stoll(argv[i + 1]);
    else if (k == "--vocab")
      vocab = std::stoll(argv[i + 1]);
    else if (k == "--iters")
      iters = std::stoi(argv[i + 1]);
    else if (k == "--json")
      json_path = argv[i + 1];
  }
  if (!zt::cuda_available()) {
    std::printf("bench_cross_entropy: no CUDA device, nothing to measure\n");
    return 0;
  }
  const zt::Device gpu = zt::Device::cuda(0);
  const int64_t n = rows * vocab;
  std::vector<int64_t> tv(static_cast<size_t>(rows));
  const auto tf = lcg_floats(tv.size(), 7, 0.f, static_cast<float>(vocab));
  for (size_t i = 0; i < tv.size(); ++i)
    tv[i] = std::min<int64_t>(static_cast<int64_t>(tf[i]), vocab - 1);
  Tensor targets = Tensor::from_ints(tv, {rows}, DType::i64, gpu);
  Tensor losses = Tensor::empty({rows}, DType::f32, gpu),
         lse = Tensor::empty({rows}, DType::f32, gpu);

  nlohmann::json out = nlohmann::json::array();
  std::printf("%-22s %-5s %8s %8s %10s %10s %8s\n", "op", "dtype", "rows", "vocab", "ms", "GB/s",
              "vs copy");
  for (DType dtype : {DType::bf16, DType::f32}) {
    const double bytes = static_cast<double>(n) * static_cast<double>(zt::dtype_size(dtype));
    Tensor logits = Tensor::from_floats(lcg_floats(static_cast<size_t>(n), 1, -8.f, 8.f),
                                        {rows, vocab}, dtype, gpu);
    Tensor dlogits = Tensor::empty({rows, vocab}, dtype, gpu);
    Tensor work = logits.clone();
    namespace k = zt::kernels;
    struct Row {
      std::string name;
      int passes;  // full passes over the logits (reads + writes)
      std::function<void()> body;
    };
    const std::vector<Row> table = {
        {"copy (d2d)", 2, [&] { dlogits.copy_from(logits); }},
        {"forward", 1, [&] { k::cross_entropy_forward(logits, targets, losses, lse); }},
        {"backward", 2, [&] { k::cross_entropy_backward(logits, targets, lse, dlogits, 1e-4f); }},
        {"backward (in place)", 2,
         [&] { k::cross_entropy_backward(work, targets, lse, work, 1e-4f); }},
        {"fused (in place)", 3, [&] { k::cross_entropy_fused(work, targets, losses, 1e-4f); }},
    };
    double copy_gbs = 0;
    for (const Row& r : table) {
      const double ms = median_ms(r.body, iters, gpu);
      const double gbs = r.passes * bytes / (ms * 1e6);
      if (copy_gbs == 0) copy_gbs = gbs;
      std::printf("%-22s %-5s %8lld %8lld %10.4f %10.1f %7.0f%%\n", r.name.c_str(),
                  std::string(zt::dtype_name(dtype)).c_str(), static_cast<long long>(rows),
                  static_cast<long long>(vocab), ms, gbs, 100 * gbs / copy_gbs);
      out.push_back({{"op", r.name},
                     {"dtype", zt::dtype_name(dtype)},
                     {"rows", rows},
                     {"vocab", vocab},
                     {"ms", ms},
                     {"gb_per_s", gbs},
                     {"fraction_of_copy", gbs / copy_gbs}});
    }
  }
  std::printf("%s\n", out.dump().c_str());
  if (!json_path.empty()) std::ofstream(json_path) << out.dump(2) << "\n";
  return 0;
}
