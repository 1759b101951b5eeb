// FLOPs, MFU, tokens/s, allocator and host memory and the step timer; see step_measures.h.
// Tested by tests/train/test_step_measures.cpp.
#include "zerotrain/train/step_measures.h"

#include <cmath>
#include <cstdio>
#include <limits>

#include "zerotrain/core/allocator.h"
#include "zerotrain/core/error.h"
#include "zerotrain/core/host_memory_stats.h"

namespace zt::train {

namespace {

constexpr std::string_view kComponent = "metrics";
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

struct KnownPeak {
  std::string_view name_part;  // matched as a substring of the CUDA device name
  double flops;
};

// Dense (no sparsity) bf16 tensor-core peaks from the vendor datasheets. More specific names first.
constexpr KnownPeak kPeaks[] = {
    {"H100 PCIe", 756e12}, {"H100 NVL", 835e12}, {"H100", 989e12}, {"H200", 989e12},
    {"H800", 989e12},      {"A100", 312e12},     {"A800", 312e12}, {"L40S", 362e12},
};

}  // namespace

double flops_per_token(const FlopsModel& m) {
  auto check = [](std::string_view name, int64_t v) {
    if (v < 0) throw ValueError(kComponent, str(name, " = ", v, ": must be >= 0"));
  };
  check("non_embedding_params", m.non_embedding_params);
  check("num_layers", m.num_layers);
  check("num_heads", m.num_heads);
  check("head_dim", m.head_dim);
  check("seq_len", m.seq_len);
  const double attention = 12.0 * static_cast<double>(m.num_layers) *
                           static_cast<double>(m.num_heads) * static_cast<double>(m.head_dim) *
                           static_cast<double>(m.seq_len);
  return 6.0 * static_cast<double>(m.non_embedding_params) + attention;
}

double peak_bf16_flops(std::string_view device_name) {
  for (const KnownPeak& k : kPeaks)
    if (device_name.find(k.name_part) != std::string_view::npos) return k.flops;
  return 0.0;
}

double peak_flops_of(Device device) {
  if (device.is_cpu()) return 0.0;
  return peak_bf16_flops(cuda_device_name(device.index));
}

double tokens_per_second(int64_t tokens, double seconds) {
  if (tokens < 0) throw ValueError(kComponent, str("tokens = ", tokens, ": must be >= 0"));
  return seconds > 0 ? static_cast<double>(tokens) / seconds : 0.0;
}

double mfu(double tokens_per_s, double flops_per_token, double peak_flops) {
  if (!(peak_flops > 0)) return std::numeric_limits<double>::quiet_NaN();
  return tokens_per_s * flops_per_token / peak_flops;
}

std::string format_mfu(double mfu) {
  if (!std::isfinite(mfu)) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", mfu);
  return buf;
}

MemorySnapshot memory_snapshot(Device device) {
  const AllocatorStats s = default_allocator(device).stats();
  MemorySnapshot m;
  m.allocated_gib = static_cast<double>(s.allocated) / kGiB;
  m.peak_allocated_gib = static_cast<double>(s.peak_allocated) / kGiB;
  m.reserved_gib = static_cast<double>(s.reserved) / kGiB;
  return m;
}

void reset_peak_memory(Device device) {
  default_allocator(device).reset_peak();
}

monitor::HostMemoryGib host_memory_snapshot() {
  const HostMemoryStats s = read_host_memory_stats();
  const double unknown = std::numeric_limits<double>::quiet_NaN();
  auto gib = [](int64_t bytes) { return static_cast<double>(bytes) / kGiB; };
  monitor::HostMemoryGib m;
  m.rss = gib(s.rss_bytes);
  m.peak_rss = gib(s.peak_rss_bytes);
  m.heap_in_use = s.heap_known ? gib(s.heap_in_use_bytes) : unknown;
  m.heap_arena = s.heap_known ? gib(s.heap_arena_bytes) : unknown;
  m.heap_mmap = s.heap_known ? gib(s.heap_mmap_bytes) : unknown;
  return m;
}

double StepTimer::lap() {
  const auto now = std::chrono::steady_clock::now();
  const double s = std::chrono::duration<double>(now - last_).count();
  last_ = now;
  return s;
}

void StepTimer::exclude(double seconds) {
  last_ += std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double>(seconds));
}

}  // namespace zt::train
