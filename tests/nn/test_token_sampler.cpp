// The token sampler: greedy picks the first largest logit; a tiny top_p keeps only the most
// probable token; sampling follows softmax(logits / T) (frequencies over many seeded draws) and
// leaves out what top_p cuts; the same seed gives the same draws; bad options are refused.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "zerotrain/core/error.h"
#include "zerotrain/nn/token_sampler.h"

namespace zt {
namespace {

using nn::SamplingOptions;
using nn::TokenSampler;

TEST(TokenSampler, GreedyPicksTheFirstLargest) {
  TokenSampler greedy(SamplingOptions{});
  EXPECT_EQ(greedy.next(std::vector<float>{0.5f, 2.0f, -1.0f, 2.0f}), 1);
  EXPECT_EQ(greedy.next(std::vector<float>{-3.0f}), 0);
  EXPECT_THROW(greedy.next(std::vector<float>{}), ValueError);
}

TEST(TokenSampler, TinyTopPKeepsOnlyTheMostProbable) {
  TokenSampler s(SamplingOptions{2.0, 1e-6, 3});
  for (int i = 0; i < 50; ++i)
    EXPECT_EQ(s.next(std::vector<float>{0.1f, 0.3f, 0.2f}), 1);
}

TEST(TokenSampler, FrequenciesFollowTheTemperedSoftmax) {
  const std::vector<float> logits{1.0f, 0.0f, 2.0f, -1.0f};
  const double t = 2.0;
  std::vector<double> p(logits.size());
  double z = 0;
  for (size_t i = 0; i < p.size(); ++i)
    z += p[i] = std::exp(logits[i] / t);
  TokenSampler s(SamplingOptions{t, 1.0, 11});
  std::vector<int> counts(logits.size());
  const int n = 20000;
  for (int i = 0; i < n; ++i)
    ++counts[static_cast<size_t>(s.next(logits))];
  for (size_t i = 0; i < p.size(); ++i)
    EXPECT_NEAR(counts[i] / double(n), p[i] / z, 0.015) << "token " << i;
}

TEST(TokenSampler, TopPLeavesOutTheTail) {
  // Probabilities at T = 1: 0.5, 0.25, 0.125, 0.125 (logits are their logs).
  const std::vector<float> logits{std::log(0.5f), std::log(0.25f), std::log(0.125f),
                                  std::log(0.125f)};
  TokenSampler s(SamplingOptions{1.0, 0.7, 4});  // 0.5 + 0.25 reaches 0.7
  std::vector<int> counts(4);
  for (int i = 0; i < 6000; ++i)
    ++counts[static_cast<size_t>(s.next(logits))];
  EXPECT_EQ(counts[2] + counts[3], 0);
  EXPECT_NEAR(counts[0] / 6000.0, 2.0 / 3.0, 0.03);
}

TEST(TokenSampler, SameSeedSameDraws) {
  const std::vector<float> logits{0.1f, 0.2f, 0.3f, 0.4f, 0.5f};
  TokenSampler a(SamplingOptions{1.0, 0.9, 42}), b(SamplingOptions{1.0, 0.9, 42}),
      c(SamplingOptions{1.0, 0.9, 43});
  std::vector<int64_t> da, db, dc;
  for (int i = 0; i < 40; ++i) {
    da.push_back(a.next(logits));
    db.push_back(b.next(logits));
    dc.push_back(c.next(logits));
  }
  EXPECT_EQ(da, db);
  EXPECT_NE(da, dc);
}

TEST(TokenSampler, RefusesBadOptions) {
  EXPECT_THROW(TokenSampler(SamplingOptions{-0.5, 1.0, 0}), ValueError);
  EXPECT_THROW(TokenSampler(SamplingOptions{NAN, 1.0, 0}), ValueError);
  EXPECT_THROW(TokenSampler(SamplingOptions{1.0, 0.0, 0}), ValueError);
  EXPECT_THROW(TokenSampler(SamplingOptions{1.0, 1.5, 0}), ValueError);
}

}  // namespace
}  // namespace zt
