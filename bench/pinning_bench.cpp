// What making page-locked host memory costs a training loop that runs beside it (issue 16: the save
// buffers are made at start while training runs). A foreground thread plays the training step: a
// fixed burst of device-to-device copies on its own stream, then a stream synchronize, over and
// over (each call takes the runtime's locks as a kernel launch does). A background thread makes
// --gib of page-locked memory one way; the table gives how long that took, how much longer the
// foreground's iterations were meanwhile (lost ms, against the median iteration before it
// started) and the longest single stall. Ways:
//   alloc          cudaHostAlloc of the whole size (what zero::host_buffer does today)
//   alloc-chunks   cudaHostAlloc per --chunk-mib
//   register       an anonymous mapping faulted in by --threads host threads (no CUDA call), then
//                  cudaHostRegister of the whole size
//   register-chunks the same, registered per --chunk-mib
//   register-thp   register with madvise(MADV_HUGEPAGE) before faulting
//   fault-only     the host threads' faulting alone, no pinning (what any host buffer costs)
// After each way, the device-to-host copy rate into the memory it made (1 GiB), which says whether
// registered memory copies as fast as cudaHostAlloc's.
//   build/bin/pinning_bench [--gib 16] [--chunk-mib 256] [--threads 8] [--ways alloc,register]
//                           [--json out.json]
#include <sys/mman.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#if ZT_WITH_CUDA
#include <cuda_runtime.h>
#endif

namespace {

using Clock = std::chrono::steady_clock;
constexpr size_t kMiB = size_t{1} << 20;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

#if ZT_WITH_CUDA
void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "[pinning_bench] %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

// Memory one way made, and how to give it back.
struct Pinned {
  std::vector<std::pair<char*, size_t>> pieces;
  // What one cudaHostAlloc or cudaHostRegister covers: a copy may not span two of them (the
  // runtime refuses it with "invalid argument").
  std::vector<std::pair<char*, size_t>> units;
  bool registered = false;  // mmap + cudaHostRegister, else cudaHostAlloc (or plain mmap)
  bool pinned = true;
  void release() {
    if (registered && pinned)
      for (const auto& unit : units)
        check(cudaHostUnregister(unit.first), "cudaHostUnregister");
    for (auto [p, n] : pieces) {
      if (!registered && pinned) {
        check(cudaFreeHost(p), "cudaFreeHost");
        continue;
      }
      munmap(p, n);
    }
    pieces.clear();
  }
};

void fault_in(char* p, size_t n, int threads) {
  std::vector<std::thread> pool;
  const size_t per = (n / threads + 4095) & ~size_t{4095};
  for (int t = 0; t < threads; ++t) {
    const size_t a = std::min(n, per * t), b = std::min(n, per * (t + 1));
    pool.emplace_back([p, a, b] { std::memset(p + a, 0, b - a); });
  }
  for (auto& th : pool)
    th.join();
}

char* map_anonymous(size_t n, bool huge) {
  void* p = mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    std::perror("[pinning_bench] mmap");
    std::exit(1);
  }
  if (huge) madvise(p, n, MADV_HUGEPAGE);
  return static_cast<char*>(p);
}

Pinned make(const std::string& way, size_t bytes, size_t chunk, int threads) {
  Pinned m;
  if (way == "alloc" || way == "alloc-chunks") {
    const size_t step = way == "alloc" ? bytes : chunk;
    for (size_t done = 0; done < bytes; done += step) {
      const size_t n = std::min(step, bytes - done);
      void* p = nullptr;
      check(cudaHostAlloc(&p, n, cudaHostAllocPortable), "cudaHostAlloc");
      m.pieces.emplace_back(static_cast<char*>(p), n);
    }
    m.units = m.pieces;
    return m;
  }
  m.registered = true;
  m.pinned = way != "fault-only";
  char* p = map_anonymous(bytes, way == "register-thp");
  m.pieces.emplace_back(p, bytes);
  fault_in(p, bytes, threads);
  const size_t step = way == "register-chunks" ? chunk : bytes;
  for (size_t done = 0; done < bytes; done += step)
    m.units.emplace_back(p + done, std::min(step, bytes - done));
  if (!m.pinned) return m;
  for (auto [q, n] : m.units)
    check(cudaHostRegister(q, n, cudaHostRegisterPortable), "cudaHostRegister");
  return m;
}

struct Foreground {
  std::atomic<bool> stop{false};
  std::vector<std::pair<double, double>> iterations;  // (start s, length s) since t0
};

// The training stand-in: --burst device-to-device copies of 64 MiB, then a synchronize.
void foreground(Foreground& f, Clock::time_point t0, void* a, void* b, int burst) {
  cudaStream_t s;
  check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate");
  while (!f.stop.load()) {
    const auto begin = Clock::now();
    for (int i = 0; i < burst; ++i)
      check(cudaMemcpyAsync(i % 2 ? a : b, i % 2 ? b : a, 64 * kMiB, cudaMemcpyDeviceToDevice, s),
            "cudaMemcpyAsync");
    check(cudaStreamSynchronize(s), "cudaStreamSynchronize");
    f.iterations.emplace_back(std::chrono::duration<double>(begin - t0).count(),
                              seconds_since(begin));
  }
  check(cudaStreamDestroy(s), "cudaStreamDestroy");
}

double d2h_rate(const Pinned& m, void* device, size_t n) {
  cudaStream_t s;
  check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate");
  size_t left = n;
  std::vector<std::pair<char*, size_t>> spans;
  for (auto [p, len] : m.units) {
    const size_t take = std::min(left, len);
    if (take) spans.emplace_back(p, take);
    left -= take;
  }
  double best = 0;
  for (int rep = 0; rep < 3; ++rep) {
    const auto t0 = Clock::now();
    size_t offset = 0;
    for (auto [p, len] : spans) {
      check(cudaMemcpyAsync(p, static_cast<char*>(device) + offset, len, cudaMemcpyDeviceToHost, s),
            "cudaMemcpyAsync D2H");
      offset += len;
    }
    check(cudaStreamSynchronize(s), "cudaStreamSynchronize");
    best = std::max(best, static_cast<double>(n - left) / seconds_since(t0) / 1e9);
  }
  check(cudaStreamDestroy(s), "cudaStreamDestroy");
  return best;
}
#endif

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Cost of making page-locked host memory beside a running training loop"};
  double gib = 16;
  int64_t chunk_mib = 256;
  int threads = 8;
  int burst = 16;
  std::string ways = "alloc,alloc-chunks,register,register-chunks,register-thp,fault-only";
  std::string json_path;
  app.add_option("--gib", gib, "page-locked GiB each way makes")->check(CLI::PositiveNumber);
  app.add_option("--chunk-mib", chunk_mib, "chunk of the *-chunks ways")
      ->check(CLI::PositiveNumber);
  app.add_option("--threads", threads, "host threads that fault the mapping in")
      ->check(CLI::PositiveNumber);
  app.add_option("--burst", burst, "device copies per foreground iteration")
      ->check(CLI::PositiveNumber);
  app.add_option("--ways", ways, "comma-separated ways (see the header of pinning_bench.cpp)");
  app.add_option("--json", json_path, "write the results here");
  CLI11_PARSE(app, argc, argv);
#if !ZT_WITH_CUDA
  std::fprintf(stderr, "[pinning_bench] needs a CUDA build (-DZT_CUDA=ON)\n");
  return 2;
#else
  const size_t bytes = static_cast<size_t>(gib * (1 << 30));
  const size_t chunk = static_cast<size_t>(chunk_mib) * kMiB;
  void *a = nullptr, *b = nullptr, *big = nullptr;
  check(cudaMalloc(&a, 64 * kMiB), "cudaMalloc");
  check(cudaMalloc(&b, 64 * kMiB), "cudaMalloc");
  check(cudaMalloc(&big, size_t{1} << 30), "cudaMalloc");
  nlohmann::json out = {{"what", "pinning_bench"}, {"gib", gib}, {"chunk_mib", chunk_mib},
                        {"threads", threads}, {"burst", burst}, {"ways", nlohmann::json::array()}};
  std::printf("%-16s %10s %12s %12s %12s %10s\n", "way", "make s", "iter ms", "lost ms",
              "max stall ms", "D2H GB/s");
  std::stringstream list(ways);
  for (std::string way; std::getline(list, way, ',');) {
    Foreground f;
    const auto t0 = Clock::now();
    std::thread fg(foreground, std::ref(f), t0, a, b, burst);
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // the baseline
    const double start = seconds_since(t0);
    Pinned m = make(way, bytes, chunk, threads);
    const double end = seconds_since(t0);
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    f.stop = true;
    fg.join();
    std::vector<double> before;
    for (auto [s, len] : f.iterations)
      if (s + len < start) before.push_back(len);
    std::sort(before.begin(), before.end());
    const double base = before.empty() ? 0 : before[before.size() / 2];
    double lost = 0, stall = 0;
    for (auto [s, len] : f.iterations)
      if (s + len > start && s < end) {
        lost += std::max(0.0, len - base);
        stall = std::max(stall, len);
      }
    const double rate = d2h_rate(m, big, std::min(bytes, size_t{1} << 30));
    m.release();
    std::printf("%-16s %10.2f %12.3f %12.1f %12.1f %10.1f\n", way.c_str(), end - start, 1e3 * base,
                1e3 * lost, 1e3 * stall, rate);
    out["ways"].push_back({{"way", way}, {"make_s", end - start}, {"iteration_ms", 1e3 * base},
                           {"lost_ms", 1e3 * lost}, {"max_stall_ms", 1e3 * stall},
                           {"d2h_gb_per_s", rate}});
  }
  if (!json_path.empty()) std::ofstream(json_path) << out.dump(1) << "\n";
  return 0;
#endif
}
