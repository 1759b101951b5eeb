// DeepSpeed's batch rule (zerotrain/config/batch_rule.h): each way of giving one, two or three of
// the sizes, and the errors with their arithmetic.
#include <gtest/gtest.h>

#include "zerotrain/config/batch_rule.h"
#include "zerotrain/core/error.h"

namespace zt::config {
namespace {

void expect_triple(const BatchTriple& b, int64_t train, int64_t micro, int64_t gas) {
  EXPECT_EQ(b.train_batch_size, train);
  EXPECT_EQ(b.micro_batch_per_gpu, micro);
  EXPECT_EQ(b.gradient_accumulation_steps, gas);
}

std::string error_of(std::optional<int64_t> t, std::optional<int64_t> m, std::optional<int64_t> g,
                     int64_t w) {
  try {
    resolve_batch_triple(t, m, g, w);
  } catch (const ValueError& e) {
    return e.what();
  }
  return "no error";
}

TEST(BatchRule, AnyTwoDetermineTheThird) {
  expect_triple(resolve_batch_triple(64, 4, std::nullopt, 4), 64, 4, 4);
  expect_triple(resolve_batch_triple(64, std::nullopt, 2, 4), 64, 8, 2);
  expect_triple(resolve_batch_triple(std::nullopt, 4, 2, 4), 32, 4, 2);
  expect_triple(resolve_batch_triple(32, 4, 2, 4), 32, 4, 2);
}

TEST(BatchRule, OneGivenFollowsDeepSpeed) {
  expect_triple(resolve_batch_triple(32, std::nullopt, std::nullopt, 4), 32, 8, 1);
  expect_triple(resolve_batch_triple(std::nullopt, 3, std::nullopt, 5), 15, 3, 1);
  EXPECT_NE(error_of(std::nullopt, std::nullopt, 4, 1).find("train_batch_size: missing"),
            std::string::npos);
  EXPECT_NE(error_of(std::nullopt, std::nullopt, std::nullopt, 1).find("missing"),
            std::string::npos);
}

TEST(BatchRule, InconsistentTripleShowsTheArithmetic) {
  EXPECT_EQ(error_of(32, 4, 2, 2),
            "[config] train_batch_size: train_batch_size 32 != train_micro_batch_size_per_gpu 4 * "
            "gradient_accumulation_steps 2 * world_size 2");
  // Integer division as DeepSpeed: 30 / 4 / 2 = 3 accumulation steps, which does not add up.
  const std::string msg = error_of(30, 4, std::nullopt, 2);
  EXPECT_NE(msg.find("30 != train_micro_batch_size_per_gpu 4 * gradient_accumulation_steps 3"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("gradient_accumulation_steps = train_batch_size 30 /"), std::string::npos);
}

TEST(BatchRule, NonPositiveValuesAreErrors) {
  EXPECT_NE(error_of(2, std::nullopt, std::nullopt, 4).find("must be > 0, got 0"),
            std::string::npos);
  EXPECT_NE(error_of(std::nullopt, -1, std::nullopt, 1).find("train_batch_size: must be > 0"),
            std::string::npos);
  EXPECT_NE(error_of(8, 0, 1, 1).find("train_micro_batch_size_per_gpu: must be > 0"),
            std::string::npos);
  EXPECT_THROW(resolve_batch_triple(8, 8, 1, 0), ValueError);
}

TEST(BatchRule, OverflowIsAnError) {
  const int64_t big = int64_t{1} << 40;
  EXPECT_NE(error_of(std::nullopt, big, big, 1).find("does not fit in 64 bits"), std::string::npos);
}

}  // namespace
}  // namespace zt::config
