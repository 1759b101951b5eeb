// Tables and JSON of the estimates (see report.h).
#include "zerotrain/estimate/report.h"

#include <cstdio>

#include "zerotrain/core/error.h"
#include "zerotrain/estimate/units.h"

namespace zt::estimate {

namespace {

std::string row(const std::string& name, double bytes, const std::string& note) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "  %-34s %9s  %s", name.c_str(), format_gib(bytes).c_str(),
                note.c_str());
  std::string s = buf;
  while (!s.empty() && s.back() == ' ')
    s.pop_back();
  return s + "\n";
}

// 1498482688 -> "1,498,482,688"
std::string grouped(int64_t v) {
  std::string d = std::to_string(v), out;
  for (size_t i = 0; i < d.size(); ++i) {
    if (i > 0 && (d.size() - i) % 3 == 0) out += ',';
    out += d[i];
  }
  return out;
}

double gib(double bytes) {
  return bytes / kGiB;
}

nlohmann::json setup_json(const RunSetup& s) {
  return {{"stage", s.stage},
          {"gpus", s.gpus},
          {"seq", s.seq},
          {"micro_batch", s.micro_batch},
          {"activation_checkpointing", s.activation_checkpointing},
          {"offload_optimizer", s.offload_optimizer ? "cpu" : "none"},
          {"offload_param", s.offload_param ? "cpu" : "none"},
          {"dtype", std::string(dtype_name(s.dtype))}};
}

}  // namespace

std::string format_peak(const PeakEstimate& e) {
  const RunSetup& s = e.setup;
  std::string out =
      str("zerotrain estimate: ", nn::family_name(s.model.family), ", ", grouped(e.params.total),
          " parameters, ", s.gpus, s.gpus > 1 ? " GPUs" : " GPU", ", seq ", s.seq, ", ",
          dtype_name(s.dtype), "\n", describe(s), "\n\n");
  char head[96];
  std::snprintf(head, sizeof head, "  %-34s %9s  %s\n", "memory per GPU", "GiB", "counted as");
  out += head;
  for (const MemoryItem& it : e.items)
    out += row(it.name, it.bytes, it.note);
  out += row("peak allocated", e.peak_allocated, "what zerotrain's memory metric reports");
  out += row("margin", e.margin,
             str("5% fragmentation + CUDA context 0.5 GiB", s.gpus > 1 ? " + NCCL 0.5 GiB" : ""));
  out += row("needed", e.needed, "");
  out += row("host (pinned) per node", e.host_per_node,
             str(s.gpus_per_node, s.gpus_per_node > 1 ? " GPUs" : " GPU", " per node"));
  return out;
}

nlohmann::json peak_json(const PeakEstimate& e) {
  nlohmann::json items = nlohmann::json::array();
  for (const MemoryItem& it : e.items)
    items.push_back(
        {{"name", it.name}, {"gib", gib(it.bytes)}, {"bytes", it.bytes}, {"note", it.note}});
  return {{"model", nn::family_name(e.setup.model.family)},
          {"params", e.params.total},
          {"largest_layer_params", e.params.largest_layer},
          {"setup", setup_json(e.setup)},
          {"items", items},
          {"activation_phase", e.activations.phase},
          {"peak_allocated_gib", gib(e.peak_allocated)},
          {"margin_gib", gib(e.margin)},
          {"needed_gib", gib(e.needed)},
          {"host_per_node_gib", gib(e.host_per_node)}};
}

nlohmann::json recommendation_json(const Recommendation& r) {
  return {{"gpu_memory_gib", gib(r.gpu_memory)},
          {"found", r.found},
          {"setup", setup_json(r.estimate.setup)},
          {"needed_gib", gib(r.estimate.needed)},
          {"line", r.line}};
}

nlohmann::json deepspeed_json(const DeepSpeedTable& t) {
  nlohmann::json rows = nlohmann::json::array();
  for (const DeepSpeedRow& r : t.rows) {
    nlohmann::json j = {{"offload_optimizer", r.offload_optimizer ? "cpu" : "none"},
                        {"per_cpu_bytes", r.bytes.cpu},
                        {"per_gpu_bytes", r.bytes.gpu},
                        {"per_cpu_gib", gib(static_cast<double>(r.bytes.cpu))},
                        {"per_gpu_gib", gib(static_cast<double>(r.bytes.gpu))}};
    if (t.stage == 3) {
      j["offload_param"] = r.offload_param ? "cpu" : "none";
      j["zero_init"] = r.zero_init;
    }
    rows.push_back(j);
  }
  nlohmann::json out = {{"stage", t.stage},
                        {"num_nodes", t.setup.nodes},
                        {"num_gpus_per_node", t.setup.gpus_per_node},
                        {"additional_buffer_factor", t.setup.additional_buffer_factor},
                        {"total_params", t.total_params},
                        {"rows", rows}};
  if (t.stage == 3) out["largest_layer_params"] = t.largest_layer_params;
  return out;
}

}  // namespace zt::estimate
