// Cast bandwidth through kernels::cast on the GPU for every dtype pair, against a device-to-device
// copy of the same bytes (read + written). Prints a table and writes JSON; the target is >= 70% of
// the copy's bandwidth.
//   ./build/bin/bench_cast [out.json]
#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <string>

#include "zerotrain/core/stream.h"
#include "zerotrain/core/tensor.h"
#include "zerotrain/kernels/cast.h"

namespace {

using namespace zt;

template <typename Fn>
double time_ms(Stream stream, int iters, Fn fn) {
  for (int i = 0; i < 3; ++i)
    fn();
  CudaEvent start(stream.device, true), stop(stream.device, true);
  start.record(stream);
  for (int i = 0; i < iters; ++i)
    fn();
  stop.record(stream);
  stop.synchronize();
  return stop.elapsed_ms(start) / iters;
}

}  // namespace

int main(int argc, char** argv) {
  if (!cuda_available()) {
    std::fprintf(stderr, "bench_cast: no CUDA device\n");
    return 1;
  }
  const Device gpu = Device::cuda(0);
  CudaStream stream(gpu);
  const int64_t n = int64_t{1} << 28;  // elements
  const int iters = 20;
  nlohmann::json out = nlohmann::json::array();
  std::printf("%-6s %-6s %10s %10s %10s %8s\n", "from", "to", "ms", "GB/s", "copy GB/s", "ratio");
  for (DType from : {DType::f32, DType::f16, DType::bf16})
    for (DType to : {DType::f32, DType::f16, DType::bf16}) {
      if (from == to) continue;
      Tensor src = Tensor::empty({n}, from, gpu, stream);
      Tensor dst = Tensor::empty({n}, to, gpu, stream);
      src.fill(1.5, stream);
      const double bytes = static_cast<double>(src.nbytes() + dst.nbytes());
      const double ms = time_ms(stream, iters, [&] { kernels::cast(src, dst, stream); });
      // A copy moving the same number of bytes: half of them read, half written.
      Tensor cs = Tensor::empty({static_cast<int64_t>(bytes / 2)}, DType::u8, gpu, stream);
      Tensor cd = Tensor::empty({static_cast<int64_t>(bytes / 2)}, DType::u8, gpu, stream);
      const double copy_ms = time_ms(
          stream, iters, [&] { copy_bytes(cd.data(), gpu, cs.data(), gpu, cs.nbytes(), stream); });
      const double gbs = bytes / (ms * 1e-3) / 1e9, copy_gbs = bytes / (copy_ms * 1e-3) / 1e9;
      std::printf("%-6s %-6s %10.3f %10.0f %10.0f %8.2f\n", dtype_name(from).data(),
                  dtype_name(to).data(), ms, gbs, copy_gbs, gbs / copy_gbs);
      out.push_back({{"from", dtype_name(from)},
                     {"to", dtype_name(to)},
                     {"elements", n},
                     {"ms", ms},
                     {"gbps", gbs},
                     {"copy_gbps", copy_gbs},
                     {"ratio", gbs / copy_gbs}});
    }
  if (argc > 1) std::ofstream(argv[1]) << out.dump(2) << "\n";
  return 0;
}
