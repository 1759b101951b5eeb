// The command-line values a ds_config's "auto" entries are resolved from, as the Hugging Face
// Trainer resolves them from TrainingArguments, and the one record of which flags the user typed.
// Tested by tests/config/test_resolve_auto.cpp.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>

namespace zt::config {

// The flags the user typed, as the command line spells them ("--zero-stage"), as opposed to
// their defaults: a given flag also fills a key the file leaves out and must agree with a value
// the file sets. The CLI fills it from every option's count.
using GivenFlags = std::set<std::string, std::less<>>;

// Each value fills an "auto" (a value, given or the flag's default); unset: nothing resolves it.
struct ConfigOverrides {
  int64_t world_size = 1;               // data-parallel ranks
  std::optional<int64_t> hidden_size;   // the model's hidden size (ZeRO bucket sizes)
  std::optional<int64_t> micro_batch;   // --micro-batch
  std::optional<int64_t> grad_accum;    // --grad-accum
  std::optional<int64_t> total_steps;   // --steps
  std::optional<int64_t> warmup_steps;  // --warmup
  std::optional<double> lr;             // --lr
  std::optional<double> beta1, beta2;   // --beta1, --beta2
  std::optional<double> eps;            // --eps
  std::optional<double> weight_decay;   // --weight-decay
  std::optional<double> clip;           // --clip
  std::optional<std::string> dtype;     // --dtype: "f32", "bf16" or "fp16"
  // zero_optimization: stage, reduce_bucket_size, stage3_param_persistence_threshold,
  // stage3_prefetch_bucket_size, stage3_max_live_parameters (no "auto" of their own: a given flag
  // fills a missing key and must agree with a set one).
  std::optional<int64_t> zero_stage;             // --zero-stage
  std::optional<int64_t> reduce_bucket_size;     // --reduce-bucket-size
  std::optional<int64_t> persistence_threshold;  // --stage3-persistence-threshold
  std::optional<int64_t> prefetch_bucket_size;   // --stage3-prefetch-bucket-size
  std::optional<int64_t> max_live_parameters;    // --stage3-max-live-parameters
  // zero_optimization.sub_group_size, offload_optimizer.device, offload_param.device, and the
  // offloaded sections' nvme_path and pin_memory: given flags only, as the ZeRO flags above.
  std::optional<int64_t> sub_group_size;         // --sub-group-size
  std::optional<std::string> offload_optimizer;  // --offload-optimizer: "none", "cpu", "nvme"
  std::optional<std::string> offload_param;      // --offload-param
  std::optional<std::string> nvme_path;          // --nvme-path
  std::optional<bool> pin_memory;                // --pin-memory
  GivenFlags given;
};

}  // namespace zt::config
