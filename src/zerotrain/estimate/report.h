// What `zerotrain estimate` prints: the peak-memory breakdown as a table or JSON, with the
// recommendation line, and DeepSpeed's tables as JSON (their text form is format_table in
// deepspeed_model_states.h). Tested by tests/estimate/test_report.cpp.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "zerotrain/estimate/deepspeed_model_states.h"
#include "zerotrain/estimate/peak_estimate.h"
#include "zerotrain/estimate/recommend.h"

namespace zt::estimate {

// A header line (model, GPUs, sequence, dtype), the setup, one row per memory item in GiB per GPU,
// then peak allocated, margin, needed, and host memory per node, each line ending in '\n'.
std::string format_peak(const PeakEstimate& estimate);

nlohmann::json peak_json(const PeakEstimate& estimate);
// {"gpu_memory_gib", "found", "setup": {...}, "needed_gib", "line"}
nlohmann::json recommendation_json(const Recommendation& recommendation);
nlohmann::json deepspeed_json(const DeepSpeedTable& table);

}  // namespace zt::estimate
