// The estimate command's output: the breakdown table, its JSON, and DeepSpeed's table as JSON.
// Covers src/zerotrain/estimate/report.h.
#include <gtest/gtest.h>

#include <string>

#include "estimate/estimate_fixtures.h"
#include "zerotrain/core/error.h"
#include "zerotrain/estimate/report.h"
#include "zerotrain/estimate/units.h"

namespace zt::estimate {
namespace {

PeakEstimate one_b() {
  RunSetup s;
  s.model = estimate_config("llama_1b_untied.json");
  s.stage = 0;
  s.seq = 4096;
  s.micro_batch = 2;
  return estimate_peak(s);
}

TEST(EstimateReport, TableListsEveryItemAndTheTotals) {
  const PeakEstimate e = one_b();
  const std::string t = format_peak(e);
  EXPECT_EQ(t.rfind("zerotrain estimate: llama, 1,498,482,688 parameters, 1 GPU, seq 4096, bf16\n"
                    "stage 0, micro-batch 2\n",
                    0),
            0u)
      << t;
  for (const MemoryItem& it : e.items)
    EXPECT_NE(t.find(str("  ", it.name)), std::string::npos) << it.name;
  EXPECT_NE(t.find("  parameters (bf16)                       2.79  whole model\n"),
            std::string::npos)
      << t;
  const size_t peak = t.find("  peak allocated ");
  ASSERT_NE(peak, std::string::npos) << t;
  const std::string peak_line = t.substr(peak, t.find('\n', peak) - peak);
  EXPECT_NE(peak_line.find(str(" ", format_gib(e.peak_allocated), "  ")), std::string::npos)
      << peak_line;
  EXPECT_NE(t.find("  needed "), std::string::npos);
  EXPECT_NE(t.find("  host per node"), std::string::npos);
}

TEST(EstimateReport, Json) {
  const PeakEstimate e = one_b();
  const nlohmann::json j = peak_json(e);
  EXPECT_EQ(j["params"], 1498482688);
  EXPECT_EQ(j["setup"]["stage"], 0);
  EXPECT_EQ(j["items"].size(), e.items.size());
  EXPECT_DOUBLE_EQ(j["needed_gib"].get<double>(), e.needed / kGiB);
  DeepSpeedSetup s;
  const nlohmann::json d = deepspeed_json(zero3_table(2783930000.0, 65800000.0, s));
  ASSERT_EQ(d["rows"].size(), 6u);
  EXPECT_EQ(d["rows"][0]["offload_param"], "cpu");
  EXPECT_EQ(format_gib(d["rows"][0]["per_cpu_gib"].get<double>() * kGiB), "70.00");
  EXPECT_EQ(format_gib(d["rows"][5]["per_cpu_gib"].get<double>() * kGiB), "15.56");
}

// With offload the table adds the host items and, with nvme, the swap files; the JSON both.
TEST(EstimateReport, OffloadAddsHostAndSwapFileSections) {
  RunSetup s;
  s.model = estimate_config("llama_1b_untied.json");
  s.stage = 3;
  s.seq = 4096;
  s.offload_optimizer = OffloadDevice::nvme;
  s.offload_param = OffloadDevice::cpu;
  const PeakEstimate e = estimate_peak(s);
  const std::string t = format_peak(e);
  EXPECT_NE(t.find("\n  host memory per GPU "), std::string::npos) << t;
  for (const MemoryItem& it : e.host_items)
    EXPECT_NE(t.find(str("  ", it.name)), std::string::npos) << it.name;
  EXPECT_NE(t.find("GiB  under nvme_path\n  masters + AdamW moments (f32) "), std::string::npos)
      << t;
  EXPECT_NE(t.find(str("  swap files per node ")), std::string::npos) << t;
  const nlohmann::json j = peak_json(e);
  EXPECT_EQ(j["setup"]["offload_optimizer"], "nvme");
  EXPECT_EQ(j["host_items"].size(), e.host_items.size());
  EXPECT_EQ(j["disk_items"].size(), 1u);
  EXPECT_DOUBLE_EQ(j["disk_per_gpu_gib"].get<double>(), e.disk_per_gpu / kGiB);
  EXPECT_DOUBLE_EQ(j["host_per_gpu_gib"].get<double>(), e.host_per_gpu / kGiB);
  EXPECT_EQ(format_peak(one_b()).find("host memory per GPU"), std::string::npos);
}

}  // namespace
}  // namespace zt::estimate
