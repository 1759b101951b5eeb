// lax_coercion.h against pydantic 2's lax mode: each case below was checked with pydantic 2.13 on
// a model with bool, int and float fields (what it converts, and what it refuses).
#include <gtest/gtest.h>

#include "zerotrain/config/lax_coercion.h"

namespace zt::config {
namespace {

using Json = nlohmann::json;

TEST(LaxCoercion, BoolsFromPydanticsSpellingsAndZeroOne) {
  for (const char* s : {"true", "True", "TRUE", "yes", "on", "t", "y", "1"})
    EXPECT_EQ(lax_bool(Json(s)), true) << s;
  for (const char* s : {"false", "no", "off", "f", "n", "0"})
    EXPECT_EQ(lax_bool(Json(s)), false) << s;
  EXPECT_EQ(lax_bool(Json(1)), true);
  EXPECT_EQ(lax_bool(Json(0)), false);
  EXPECT_EQ(lax_bool(Json(1.0)), true);
  for (const Json& v : {Json(" true"), Json("true "), Json("2"), Json(""), Json("1.0"), Json(2),
                        Json(0.5), Json::array()})
    EXPECT_EQ(lax_bool(v), std::nullopt) << v.dump();
}

TEST(LaxCoercion, IntegersFromDigitStringsAndBools) {
  const std::pair<const char*, int64_t> ok[] = {{"5", 5},
                                                {"5.0", 5},
                                                {" 5 ", 5},
                                                {"+5", 5},
                                                {"-5", -5},
                                                {"1_000", 1000},
                                                {"00012", 12},
                                                {"-0", 0},
                                                {"5.000", 5},
                                                {"\t5\n", 5},
                                                {"1_0.0", 10},
                                                {"-5.0", -5},
                                                {"500000000", 500000000}};
  for (const auto& [s, n] : ok)
    EXPECT_EQ(lax_int(Json(s)), n) << s;
  EXPECT_EQ(lax_int(Json(true)), 1);
  EXPECT_EQ(lax_int(Json(false)), 0);
  for (const char* s : {"5.5", "5e2", "0x10", "true", "5.", ".0", "1__0", "_1", "1_", "5.0e0",
                        "+ 5", "5.0_0", "+-5", ""})
    EXPECT_EQ(lax_int(Json(s)), std::nullopt) << s;
}

TEST(LaxCoercion, NumbersFromNumericStringsAndBools) {
  const std::pair<const char*, double> ok[] = {
      {"1e-5", 1e-5},   {"1.5", 1.5},        {" 1.5 ", 1.5},  {"-1", -1.0},
      {"1_0", 10.0},    {".5", 0.5},         {"5.", 5.0},     {"1E5", 1e5},
      {"1.5e+3", 1500}, {"1_000.5", 1000.5}, {"1.0_5", 1.05}, {"1e1_0", 1e10}};
  for (const auto& [s, d] : ok)
    EXPECT_EQ(lax_double(Json(s)), d) << s;
  EXPECT_TRUE(std::isinf(*lax_double(Json("Infinity"))));
  EXPECT_TRUE(std::isinf(*lax_double(Json("+inf"))));
  EXPECT_TRUE(std::isnan(*lax_double(Json("NaN"))));
  EXPECT_EQ(lax_double(Json(true)), 1.0);
  for (const char* s : {"true", "0x1", "0x1p3", "1e", "e5", "1__0", "_1", "1_", "1.5f", "+-1"})
    EXPECT_EQ(lax_double(Json(s)), std::nullopt) << s;
}

TEST(LaxCoercion, OnlyDeepSpeedsPydanticSections) {
  for (const char* s : {"fp16", "bf16", "zero_optimization", "tensorboard", "wandb", "csv_monitor",
                        "comet", "comms_logger"})
    EXPECT_TRUE(validated_leniently(s)) << s;
  for (const char* s : {"aio", "optimizer", "scheduler", "activation_checkpointing", "checkpoint",
                        "flops_profiler", "gradient_clipping", "data_types"})
    EXPECT_FALSE(validated_leniently(s)) << s;
}

}  // namespace
}  // namespace zt::config
