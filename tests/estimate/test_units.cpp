// Command-line counts and sizes, and GiB formatting. Covers src/zerotrain/estimate/units.h.
#include <gtest/gtest.h>

#include <string>

#include "zerotrain/core/error.h"
#include "zerotrain/estimate/units.h"

namespace zt::estimate {
namespace {

TEST(EstimateUnits, Counts) {
  EXPECT_DOUBLE_EQ(parse_count("2783930000", "--params"), 2783930000.0);
  EXPECT_DOUBLE_EQ(parse_count("2851e6", "--params"), 2851e6);
  EXPECT_DOUBLE_EQ(parse_count("1.5B", "--params"), 1.5e9);
  EXPECT_DOUBLE_EQ(parse_count("65.8M", "--largest-layer"), 65.8e6);
}

TEST(EstimateUnits, Sizes) {
  EXPECT_DOUBLE_EQ(parse_size("80GiB", "--gpu-memory"), 80 * kGiB);
  EXPECT_DOUBLE_EQ(parse_size("80GB", "--gpu-memory"), 80e9);
  EXPECT_DOUBLE_EQ(parse_size("141", "--gpu-memory"), 141 * kGiB);
  EXPECT_EQ(format_gib(70.004 * kGiB), "70.00");
}

TEST(EstimateUnits, BadValuesAreNamed) {
  for (const char* bad : {"-5", "0", "lots", "5X", "", "1e400"}) {
    try {
      parse_count(bad, "--params");
      FAIL() << "accepted \"" << bad << "\"";
    } catch (const ValueError& e) {
      const std::string m = e.what();
      EXPECT_EQ(m.rfind("[estimate] --params: ", 0), 0u) << m;
      EXPECT_NE(m.find(std::string("\"") + bad + "\""), std::string::npos) << m;
    }
  }
  EXPECT_THROW(parse_size("80 parsecs", "--gpu-memory"), ValueError);
}

}  // namespace
}  // namespace zt::estimate
