// The metrics record's fields, JSON line and writer; see metrics.h.
// Tested by tests/monitor/test_metrics.cpp.
#include "zerotrain/monitor/metrics.h"

#include <cmath>
#include <cstdio>
#include <string_view>

#include "zerotrain/core/error.h"

namespace zt::monitor {

namespace {

constexpr std::string_view kComponent = "metrics";

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
    const MemorySplitGib& p = *m.memory_peak;
    if (p.host_params != 0 || p.host_grads != 0 || p.host_optimizer != 0 || p.nvme != 0) {
      f.emplace_back("peak_host_params_gib", p.host_params);
      f.emplace_back("peak_host_grads_gib", p.host_grads);
      f.emplace_back("peak_host_optimizer_gib", p.host_optimizer);
      f.emplace_back("peak_swap_gib", p.nvme);
    }
  }
  if (m.host_memory) {
    f.emplace_back("host_rss_gib", m.host_memory->rss);
    f.emplace_back("host_peak_rss_gib", m.host_memory->peak_rss);
    f.emplace_back("heap_in_use_gib", m.host_memory->heap_in_use);
    f.emplace_back("heap_arena_gib", m.host_memory->heap_arena);
    f.emplace_back("heap_mmap_gib", m.host_memory->heap_mmap);
  }
  return f;
}

std::vector<std::pair<std::string, double>> eval_fields(const EvalMetrics& m) {
  return {{"eval_loss", m.loss},
          {"eval_perplexity", m.perplexity},
          {"eval_tokens", static_cast<double>(m.tokens)},
          {"eval_sequences", static_cast<double>(m.sequences)},
          {"eval_seconds", m.seconds}};
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

std::string to_json_line(const EvalMetrics& m) {
  std::string s = "{\"type\":\"eval\",\"step\":" + std::to_string(m.step) + ",\"eval_loss\":";
  append_number(s, m.loss);
  s += ",\"eval_perplexity\":";
  append_number(s, m.perplexity);
  s += ",\"eval_tokens\":" + std::to_string(m.tokens);
  s += ",\"eval_sequences\":" + std::to_string(m.sequences);
  s += ",\"eval_seconds\":";
  append_number(s, m.seconds);
  s += '}';
  return s;
}

MetricsWriter::MetricsWriter(const std::filesystem::path& path, bool append)
    : path_(path), out_(path, append ? std::ios::app : std::ios::trunc) {
  if (!out_) throw Error(kComponent, str(path.string(), ": cannot open for writing"));
}

void MetricsWriter::write(const StepMetrics& m) {
  write_line(to_json_line(m));
}

void MetricsWriter::write(const EvalMetrics& m) {
  write_line(to_json_line(m));
}

void MetricsWriter::write_line(const std::string& line) {
  out_ << line << '\n';
  out_.flush();
  if (!out_) throw Error(kComponent, str(path_.string(), ": write failed"));
}

}  // namespace zt::monitor
