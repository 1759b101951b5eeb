// Bus bandwidth of all_reduce / reduce_scatter / all_gather through zerotrain's NCCL communicator
// and through raw NCCL calls on a second, plain communicator, for buffer sizes 1 MiB..1 GiB on N
// GPUs; prints a table (rank 0) and writes JSON. busbw as nccl-tests computes it: algbw * 2(n-1)/n
// for all_reduce, algbw * (n-1)/n for the others, algbw = buffer bytes / time per call, where the
// buffer is the full (gathered / unscattered) one.
//   mpirun -n 8 build/bin/comm_bench --json bench/results/comm_h200x8.json
//   build/bin/zerotrain launch -n 8 -- build/bin/comm_bench
#include <CLI/CLI.hpp>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "zerotrain/comm/process_group.h"
#include "zerotrain/core/dtype.h"
#include "zerotrain/core/error.h"

#if ZT_WITH_CUDA
#include <nccl.h>

#include <cstring>

#include "zerotrain/comm/nccl/nccl_check.h"
#include "zerotrain/core/cuda/cuda_check.h"
#include "zerotrain/core/stream.h"
#include "zerotrain/core/tensor.h"

namespace {

using zt::comm::ReduceOp;

struct Options {
  size_t min_bytes = size_t{1} << 20;
  size_t max_bytes = size_t{1} << 30;
  int warmup = 5;
  int iters = 20;
  std::string dtype = "bf16";
  std::string json_path;
};

struct Result {
  std::string op;
  size_t bytes;
  double ours_ms, raw_ms, ours_busbw, raw_busbw;
};

// Average ms per call of `fn` over iters calls, after warmup calls (events on `s`).
template <typename F>
double time_per_call(F&& fn, zt::Stream s, const Options& o) {
  for (int i = 0; i < o.warmup; ++i)
    fn();
  zt::synchronize(s);
  zt::CudaEvent a(s.device, true), b(s.device, true);
  a.record(s);
  for (int i = 0; i < o.iters; ++i)
    fn();
  b.record(s);
  b.synchronize();
  return b.elapsed_ms(a) / o.iters;
}

int run(const Options& o) {
  auto pg = zt::comm::init_process_group();
  const int n = pg->world_size(), me = pg->rank();
  zt::Device dev = pg->local_device();
  zt::CudaDeviceGuard guard(dev);  // raw NCCL joins on the current device
  zt::DType dt = zt::parse_dtype(o.dtype);
  const size_t es = zt::dtype_size(dt);
  auto ours = pg->make_device_communicator(dev);

  // The raw baseline: a plain blocking communicator joined through the same bootstrap.
  ncclUniqueId id{};
  std::vector<uint8_t> bytes;
  if (me == 0) {
    ZT_NCCL_CHECK(ncclGetUniqueId(&id));
    bytes.assign(reinterpret_cast<uint8_t*>(&id), reinterpret_cast<uint8_t*>(&id) + sizeof(id));
  }
  bytes = pg->broadcast_bytes(bytes);
  std::memcpy(&id, bytes.data(), sizeof(id));
  ncclComm_t raw = nullptr;
  ZT_NCCL_CHECK(ncclCommInitRank(&raw, n, id, me));

  zt::CudaStream cs(dev);
  zt::Stream s = cs.get();
  auto st = static_cast<cudaStream_t>(s.handle);
  const ncclDataType_t nd = zt::comm::detail::to_nccl(dt);
  const double ar_factor = 2.0 * (n - 1) / n, other_factor = double(n - 1) / n;

  std::vector<Result> results;
  for (size_t total = o.min_bytes; total <= o.max_bytes; total *= 2) {
    const size_t count = total / es / static_cast<size_t>(n) * static_cast<size_t>(n);
    const size_t shard = count / static_cast<size_t>(n);
    zt::Tensor full = zt::Tensor::zeros({static_cast<int64_t>(count)}, dt, dev, s);
    zt::Tensor part = zt::Tensor::zeros({static_cast<int64_t>(shard)}, dt, dev, s);
    void* f = full.data();
    void* p = part.data();
    const double buf = static_cast<double>(count * es);
    auto add = [&](const char* op, double factor, double ours_ms, double raw_ms) {
      auto busbw = [&](double ms) { return buf / (ms * 1e-3) / 1e9 * factor; };
      results.push_back({op, count * es, ours_ms, raw_ms, busbw(ours_ms), busbw(raw_ms)});
    };
    add("all_reduce", ar_factor,
        time_per_call([&] { ours->all_reduce(f, f, count, dt, ReduceOp::sum, s); }, s, o),
        time_per_call([&] { ZT_NCCL_CHECK(ncclAllReduce(f, f, count, nd, ncclSum, raw, st)); }, s,
                      o));
    add("reduce_scatter", other_factor,
        time_per_call([&] { ours->reduce_scatter(f, p, shard, dt, ReduceOp::sum, s); }, s, o),
        time_per_call([&] { ZT_NCCL_CHECK(ncclReduceScatter(f, p, shard, nd, ncclSum, raw, st)); },
                      s, o));
    add("all_gather", other_factor,
        time_per_call([&] { ours->all_gather(p, f, shard, dt, s); }, s, o),
        time_per_call([&] { ZT_NCCL_CHECK(ncclAllGather(p, f, shard, nd, raw, st)); }, s, o));
  }
  ncclCommDestroy(raw);

  if (me != 0) return 0;
  std::printf("comm_bench: %d ranks, %s on %s, %d iterations per size\n", n, o.dtype.c_str(),
              zt::cuda_device_name(dev.index).c_str(), o.iters);
  std::printf("%-15s %12s %11s %11s %13s %13s %7s\n", "op", "bytes", "ours (ms)", "raw (ms)",
              "ours busbw", "raw busbw", "ratio");
  nlohmann::json rows = nlohmann::json::array();
  for (const Result& r : results) {
    std::printf("%-15s %12zu %11.4f %11.4f %9.1f GB/s %9.1f GB/s %7.3f\n", r.op.c_str(), r.bytes,
                r.ours_ms, r.raw_ms, r.ours_busbw, r.raw_busbw, r.ours_busbw / r.raw_busbw);
    rows.push_back({{"op", r.op},
                    {"bytes", r.bytes},
                    {"ours_ms", r.ours_ms},
                    {"raw_ms", r.raw_ms},
                    {"ours_busbw_gbps", r.ours_busbw},
                    {"raw_busbw_gbps", r.raw_busbw},
                    {"ratio", r.ours_busbw / r.raw_busbw}});
  }
  nlohmann::json report = {{"bench", "comm_bench"},
                           {"commit", ZT_GIT_COMMIT},
                           {"ranks", n},
                           {"dtype", o.dtype},
                           {"device", zt::cuda_device_name(dev.index)},
                           {"iters", o.iters},
                           {"rows", rows}};
  std::string text = report.dump(2);
  if (o.json_path.empty()) {
    std::printf("%s\n", text.c_str());
  } else {
    std::ofstream(o.json_path) << text << "\n";
    std::printf("wrote %s\n", o.json_path.c_str());
  }
  return 0;
}

}  // namespace
#endif

int main(int argc, char** argv) {
  CLI::App app{"Bus bandwidth of zerotrain's NCCL collectives against raw NCCL"};
#if ZT_WITH_CUDA
  Options o;
  app.add_option("--min-bytes", o.min_bytes, "smallest buffer (bytes)");
  app.add_option("--max-bytes", o.max_bytes, "largest buffer (bytes)");
  app.add_option("--warmup", o.warmup, "untimed calls per size and op");
  app.add_option("--iters", o.iters, "timed calls per size and op");
  app.add_option("--dtype", o.dtype, "element type: f32, bf16, f16");
  app.add_option("--json", o.json_path, "write the JSON report here (default: print it)");
  CLI11_PARSE(app, argc, argv);
  try {
    return run(o);
  } catch (const zt::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
#else
  CLI11_PARSE(app, argc, argv);
  std::fprintf(stderr, "[comm_bench] needs the CUDA build (NCCL)\n");
  return 1;
#endif
}
