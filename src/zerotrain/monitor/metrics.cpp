// Throughput, MFU, memory and the JSONL metrics writer; see metrics.h.
// Tested by tests/monitor/test_metrics.cpp.
#include "zerotrain/monitor/metrics.h"

#include <cmath>
#include <cstdio>

#include "zerotrain/core/allocator.h"
#include "zerotrain/core/error.h"

namespace zt::monitor {

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

void append_number(std::string& s, double x) {
  if (!std::isfinite(x)) {
    s += "null";
    return;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", x);
  s += buf;
}

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

std::vector<std::pair<std::string, double>> metric_fields(const StepMetrics& m) {
  std::vector<std::pair<std::string, double>> f = {
      {"step", static_cast<double>(m.step)},
      {"loss", m.loss},
      {"lr", m.lr},
      {"grad_norm", m.grad_norm},
      {"loss_scale", m.loss_scale},
      {"skipped", static_cast<double>(m.skipped)},
      {"tokens_per_s", m.tokens_per_s},
      {"tokens_per_s_per_gpu", m.tokens_per_s_per_gpu},
      {"world_size", static_cast<double>(m.world_size)},
      {"mfu", m.mfu},
      {"mem_gib", m.mem_gib},
      {"peak_mem_gib", m.peak_mem_gib},
      {"reserved_gib", m.reserved_gib}};
  if (m.wall_clock) {
    f.emplace_back("forward_ms", m.wall_clock->forward_ms);
    f.emplace_back("backward_ms", m.wall_clock->backward_ms);
    f.emplace_back("comm_ms", m.wall_clock->comm_ms);
    f.emplace_back("step_ms", m.wall_clock->step_ms);
  }
  if (m.memory_peak) {
    f.emplace_back("peak_step", static_cast<double>(m.memory_peak->step));
    f.emplace_back("peak_params_gib", m.memory_peak->params);
    f.emplace_back("peak_grads_gib", m.memory_peak->grads);
    f.emplace_back("peak_optimizer_gib", m.memory_peak->optimizer);
    f.emplace_back("peak_activations_gib", m.memory_peak->activations);
    f.emplace_back("peak_other_gib", m.memory_peak->other);
  }
  return f;
}

std::string format_metric(double value) {
  std::string s;
  append_number(s, value);
  return s;
}

std::string to_json_line(const StepMetrics& m) {
  std::string s = "{\"step\":" + std::to_string(m.step);
  for (const auto& [key, value] : metric_fields(m)) {
    if (key == "step") continue;
    s += ",\"";
    s += key;
    s += "\":";
    if (key == "world_size")
      s += std::to_string(m.world_size);
    else if (key == "skipped")
      s += std::to_string(m.skipped);
    else
      append_number(s, value);
  }
  s += '}';
  return s;
}

MetricsWriter::MetricsWriter(const std::filesystem::path& path, bool append)
    : path_(path), out_(path, append ? std::ios::app : std::ios::trunc) {
  if (!out_) throw Error(kComponent, str(path.string(), ": cannot open for writing"));
}

void MetricsWriter::write(const StepMetrics& m) {
  out_ << to_json_line(m) << '\n';
  out_.flush();
  if (!out_) throw Error(kComponent, str(path_.string(), ": write failed"));
}

double StepTimer::lap() {
  const auto now = std::chrono::steady_clock::now();
  const double s = std::chrono::duration<double>(now - last_).count();
  last_ = now;
  return s;
}

}  // namespace zt::monitor
