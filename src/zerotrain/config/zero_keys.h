// The numeric keys of zero_optimization that more than one layer reads (the ds_config structs'
// initializers, train's ZeRO section and its flags, the engine's options, the estimator): each
// key's DeepSpeed 0.19 default and least value written once (zero_key_table.h's row of the key
// takes its path, flag and bound from here), the one check of a value against it, the one check
// of a stage (check_zero_stage), and the short form ("5e8") the help texts write a default in.
// Tested by tests/config/test_zero_keys.cpp and tests/config/test_zero_key_table.cpp, and through
// its users by tests/config/test_ds_config_corpus.cpp (invalid/negative_bucket),
// tests/zero/test_zero_stage.cpp and tests/train/test_run_config.cpp.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace zt::config {

struct ZeroSizeKey {
  std::string_view
      path;  // under zero_optimization: "reduce_bucket_size", "offload_param.max_in_cpu"
  std::string_view flag;  // zerotrain train's flag for it ("--reduce-bucket-size"), or empty
  int64_t default_value;  // DeepSpeed's, when the file leaves the key out
  int64_t min;            // the least value DeepSpeed accepts
};

namespace zero_keys {
inline constexpr ZeroSizeKey kReduceBucketSize{"reduce_bucket_size", "--reduce-bucket-size",
                                               500'000'000, 0};
inline constexpr ZeroSizeKey kAllgatherBucketSize{"allgather_bucket_size", "", 500'000'000, 0};
// 0: one group per sub-group.
inline constexpr ZeroSizeKey kSubGroupSize{"sub_group_size", "--sub-group-size", 1'000'000'000, 0};
inline constexpr ZeroSizeKey kPrefetchBucketSize{"stage3_prefetch_bucket_size",
                                                 "--stage3-prefetch-bucket-size", 50'000'000, 0};
inline constexpr ZeroSizeKey kParamPersistenceThreshold{
    "stage3_param_persistence_threshold", "--stage3-persistence-threshold", 100'000, 0};
inline constexpr ZeroSizeKey kMaxLiveParameters{"stage3_max_live_parameters",
                                                "--stage3-max-live-parameters", 1'000'000'000, 0};
inline constexpr ZeroSizeKey kMaxReuseDistance{"stage3_max_reuse_distance", "", 1'000'000'000, 0};
inline constexpr ZeroSizeKey kOptimizerBufferCount{"offload_optimizer.buffer_count", "", 4, 0};
inline constexpr ZeroSizeKey kParamBufferCount{"offload_param.buffer_count", "", 5, 0};
inline constexpr ZeroSizeKey kParamBufferSize{"offload_param.buffer_size", "", 100'000'000, 0};
inline constexpr ZeroSizeKey kParamMaxInCpu{"offload_param.max_in_cpu", "", 1'000'000'000, 0};
}  // namespace zero_keys

// Whether the messages of check_zero_size name the key's flag beside it.
enum class NameFlag { no, yes };

// The one check of a value against its key's least value. Throws ValueError
// "[config] zero_optimization.<path> (<flag>): must be >= <min>, got <value>" (without the flag
// for NameFlag::no or a key that has none).
void check_zero_size(const ZeroSizeKey& key, int64_t value, NameFlag name_flag = NameFlag::yes);

// The one bound of a ZeRO stage, 0..3 (zero_optimization.stage, --zero-stage, estimate's --stage).
bool valid_zero_stage(int64_t stage);

// How check_zero_stage words its message: "must be 0, 1, 2 or 3" or, as the ds_config parser
// words a bad value, "expected 0, 1, 2 or 3".
enum class StageWording { must_be, expected };

// The one check of a stage against valid_zero_stage. Throws ValueError
// "[<component>] <what>: must be 0, 1, 2 or 3, got <stage>" (or "expected ...").
void check_zero_stage(int64_t stage, std::string_view component, std::string_view what,
                      StageWording wording = StageWording::must_be);

// A count as the help texts write it: 500000000 -> "5e8", 4 -> "4", 1500 -> "1500".
std::string short_count(int64_t n);

}  // namespace zt::config
