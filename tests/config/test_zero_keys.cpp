// config/zero_keys.h: each row's default is what a file without the key gets (the ds_config
// structs, as `config check` prints them), the one check's message, and short_count.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "zerotrain/config/load.h"
#include "zerotrain/config/zero_keys.h"
#include "zerotrain/core/error.h"

namespace zt::config {
namespace {

using namespace zero_keys;

TEST(ZeroKeys, DefaultsAreWhatAFileWithoutTheKeyGets) {
  DsConfig c;
  c.zero_optimization.offload_param.emplace();
  c.zero_optimization.offload_optimizer.emplace();
  const nlohmann::json zero = nlohmann::json::parse(ds_config_json(c))["zero_optimization"];
  for (const ZeroSizeKey* k :
       {&kReduceBucketSize, &kAllgatherBucketSize, &kSubGroupSize, &kPrefetchBucketSize,
        &kParamPersistenceThreshold, &kMaxLiveParameters, &kMaxReuseDistance,
        &kOptimizerBufferCount, &kParamBufferCount, &kParamBufferSize, &kParamMaxInCpu}) {
    std::string pointer = "/" + std::string(k->path);
    for (char& ch : pointer)
      if (ch == '.') ch = '/';
    EXPECT_EQ(zero.at(nlohmann::json::json_pointer(pointer)).get<int64_t>(), k->default_value)
        << k->path;
  }
}

std::string refusal(const ZeroSizeKey& key, int64_t value, NameFlag name_flag) {
  try {
    check_zero_size(key, value, name_flag);
  } catch (const ValueError& e) {
    return e.what();
  }
  return "accepted";
}

TEST(ZeroKeys, CheckNamesTheKeyTheFlagAndTheBound) {
  EXPECT_EQ(refusal(kSubGroupSize, 0, NameFlag::no), "accepted");  // 0: one group per sub-group
  EXPECT_EQ(refusal(kReduceBucketSize, -1, NameFlag::yes),
            "[config] zero_optimization.reduce_bucket_size (--reduce-bucket-size): must be >= 0, "
            "got -1");
  EXPECT_EQ(refusal(kSubGroupSize, -2, NameFlag::no),
            "[config] zero_optimization.sub_group_size: must be >= 0, got -2");
  EXPECT_EQ(refusal(kParamMaxInCpu, -3, NameFlag::yes),
            "[config] zero_optimization.offload_param.max_in_cpu: must be >= 0, got -3");
}

TEST(ZeroKeys, ShortCount) {
  EXPECT_EQ(short_count(500'000'000), "5e8");
  EXPECT_EQ(short_count(1'000'000'000), "1e9");
  EXPECT_EQ(short_count(100'000), "1e5");
  EXPECT_EQ(short_count(4), "4");
  EXPECT_EQ(short_count(0), "0");
  EXPECT_EQ(short_count(1500), "1500");
}

}  // namespace
}  // namespace zt::config
