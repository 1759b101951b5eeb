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
          {"offload_optimizer", config::offload_device_name(s.offload_optimizer)},
          {"offload_param", config::offload_device_name(s.offload_param)},
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
  const std::string node =
      str(s.gpus_per_node, s.gpus_per_node > 1 ? " GPUs" : " GPU", " per node");
  if (!e.host_items.empty()) {
    out += "\n";
    std::snprintf(head, sizeof head, "  %-34s %9s  %s\n", "host memory per GPU", "GiB",
                  "counted as");
    out += head;
    for (const MemoryItem& it : e.host_items)
      out += row(it.name, it.bytes, it.note);
  }
  out += row("host per node", e.host_per_node, node);
  if (!e.disk_items.empty()) {
    out += "\n";
    std::snprintf(head, sizeof head, "  %-34s %9s  %s\n", "swap files per GPU", "GiB",
                  "under nvme_path");
    out += head;
    for (const MemoryItem& it : e.disk_items)
      out += row(it.name, it.bytes, "");
    out += row("swap files per node", e.disk_per_node, node);
  }
  return out;
}

namespace {

nlohmann::json items_json(const std::vector<MemoryItem>& list) {
  nlohmann::json items = nlohmann::json::array();
  for (const MemoryItem& it : list)
    items.push_back(
        {{"name", it.name}, {"gib", gib(it.bytes)}, {"bytes", it.bytes}, {"note", it.note}});
  return items;
}

}  // namespace

nlohmann::json peak_json(const PeakEstimate& e) {
  const nlohmann::json items = items_json(e.items);
  return {{"model", nn::family_name(e.setup.model.family)},
          {"params", e.params.total},
          {"largest_layer_params", e.params.largest_layer},
          {"setup", setup_json(e.setup)},
          {"items", items},
          {"activation_phase", e.activations.phase},
          {"peak_allocated_gib", gib(e.peak_allocated)},
          {"margin_gib", gib(e.margin)},
          {"needed_gib", gib(e.needed)},
          {"host_items", items_json(e.host_items)},
          {"host_per_gpu_gib", gib(e.host_per_gpu)},
          {"host_per_node_gib", gib(e.host_per_node)},
          {"disk_items", items_json(e.disk_items)},
          {"disk_per_gpu_gib", gib(e.disk_per_gpu)},
          {"disk_per_node_gib", gib(e.disk_per_node)}};
}

nlohmann::json recommendation_json(const Recommendation& r) {
  return {{"gpu_memory_gib", gib(r.gpu_memory)},
          {"host_memory_gib", gib(r.host_memory)},
          {"found", r.found},
          {"setup", setup_json(r.estimate.setup)},
          {"needed_gib", gib(r.estimate.needed)},
          {"host_per_node_gib", gib(r.estimate.host_per_node)},
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
