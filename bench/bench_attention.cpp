// Attention benchmark: forward and backward time and TFLOP/s of the CUDA kernels on LLaMA-like
// shapes. Causal FLOPs: forward 4 * S^2 * D * Hq * B / 2, backward 2.5x that (5 of the 7 products
// the kernels actually run; FlashAttention's convention, so numbers compare with cuDNN/FA2).
//   ./build-cuda/bin/bench_attention [--json out.json] [--iters N] [--machine NAME]
// Prints a table and writes JSON (with the machine name given).
#include <cstdio>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "zerotrain/core/stream.h"
#include "zerotrain/core/tensor.h"
#include "zerotrain/kernels/attention.h"

namespace {

struct Case {
  int64_t B, S, Hq, Hkv, D, window;
  zt::DType dtype;
};

// Mean milliseconds of `iters` calls of fn after 3 warm-ups, timed with events on `s`.
template <typename Fn>
double time_ms(zt::Stream s, int iters, Fn fn) {
  for (int i = 0; i < 3; ++i)
    fn();
  zt::CudaEvent start(s.device, true), stop(s.device, true);
  start.record(s);
  for (int i = 0; i < iters; ++i)
    fn();
  stop.record(s);
  stop.synchronize();
  return stop.elapsed_ms(start) / iters;
}

}  // namespace

int main(int argc, char** argv) {
  std::string json_path, machine;
  int iters = 20;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--json")) json_path = argv[i + 1];
    if (!std::strcmp(argv[i], "--iters")) iters = std::stoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--machine")) machine = argv[i + 1];
  }
  if (!zt::cuda_available()) {
    std::printf("bench_attention: no CUDA device\n");
    return 0;
  }
  const zt::Device dev = zt::Device::cuda(0);
  zt::CudaStream cs(dev);
  const zt::Stream s = cs.get();
  const std::vector<Case> cases = {
      {1, 4096, 32, 8, 128, 0, zt::DType::bf16},    {1, 4096, 32, 8, 128, 0, zt::DType::f16},
      {2, 2048, 32, 8, 128, 0, zt::DType::bf16},    {1, 8192, 32, 8, 128, 0, zt::DType::bf16},
      {1, 4096, 32, 8, 64, 0, zt::DType::bf16},     {1, 4096, 24, 8, 128, 0, zt::DType::bf16},
      {1, 4096, 32, 8, 128, 1024, zt::DType::bf16}, {1, 4096, 32, 8, 128, 0, zt::DType::f32},
  };
  nlohmann::json rows = nlohmann::json::array();
  std::printf("%-6s %2s %6s %6s %4s %6s | %9s %9s | %9s %9s\n", "dtype", "B", "S", "Hq/Hkv", "D",
              "window", "fwd ms", "TFLOP/s", "bwd ms", "TFLOP/s");
  for (const Case& c : cases) {
    auto rnd = [&](const zt::Shape& sh) {
      zt::Tensor t = zt::Tensor::empty(sh, c.dtype, dev, s);
      t.fill(0.5, s);  // values do not change the work; a constant keeps setup cheap
      return t;
    };
    zt::Tensor q = rnd({c.B, c.S, c.Hq, c.D}), k = rnd({c.B, c.S, c.Hkv, c.D}),
               v = rnd({c.B, c.S, c.Hkv, c.D}), dout = rnd({c.B, c.S, c.Hq, c.D});
    zt::Tensor out = zt::Tensor::empty(q.shape(), c.dtype, dev, s);
    zt::Tensor lse = zt::Tensor::empty({c.B, c.Hq, c.S}, zt::DType::f32, dev, s);
    zt::Tensor dq = zt::Tensor::empty(q.shape(), c.dtype, dev, s);
    zt::Tensor dk = zt::Tensor::empty(k.shape(), c.dtype, dev, s);
    zt::Tensor dv = zt::Tensor::empty(v.shape(), c.dtype, dev, s);
    const zt::kernels::AttentionOptions opt{0.0f, c.window};
    const int n = c.dtype == zt::DType::f32 ? 2 : iters;
    const double fwd =
        time_ms(s, n, [&] { zt::kernels::attention_forward(q, k, v, out, lse, opt, s); });
    const double bwd = time_ms(s, n, [&] {
      zt::kernels::attention_backward(q, k, v, out, lse, dout, dq, dk, dv, opt, s);
    });
    // Visible (query, key) pairs: S(S+1)/2 when causal, fewer with a window.
    double pairs = 0;
    for (int64_t i = 0; i < c.S; ++i)
      pairs += c.window > 0 && c.window < i + 1 ? c.window : i + 1;
    const double fwd_flop = 4.0 * pairs * c.D * c.Hq * c.B;
    const double fwd_tf = fwd_flop / (fwd * 1e9), bwd_tf = 2.5 * fwd_flop / (bwd * 1e9);
    std::printf("%-6s %2lld %6lld %3lld/%-2lld %4lld %6lld | %9.3f %9.1f | %9.3f %9.1f\n",
                std::string(zt::dtype_name(c.dtype)).c_str(), (long long)c.B, (long long)c.S,
                (long long)c.Hq, (long long)c.Hkv, (long long)c.D, (long long)c.window, fwd, fwd_tf,
                bwd, bwd_tf);
    rows.push_back({{"dtype", zt::dtype_name(c.dtype)},
                    {"B", c.B},
                    {"S", c.S},
                    {"Hq", c.Hq},
                    {"Hkv", c.Hkv},
                    {"D", c.D},
                    {"window", c.window},
                    {"fwd_ms", fwd},
                    {"fwd_tflops", fwd_tf},
                    {"bwd_ms", bwd},
                    {"bwd_tflops", bwd_tf}});
  }
  if (!json_path.empty()) {
    std::ofstream(json_path)
        << nlohmann::json{{"bench", "attention"}, {"machine", machine}, {"results", rows}}.dump(2)
        << "\n";
  }
  return 0;
}
