// One line per error across ranks (zerotrain/comm/agreed_checks.h): who prints what, from the
// gathered words; one process runs its checks as they are. The multi-rank behaviour end to end:
// tests/cli/rank_errors.py.
#include <gtest/gtest.h>

#include "zerotrain/comm/agreed_checks.h"
#include "zerotrain/comm/self_communicator.h"

namespace zt::comm {
namespace {

TEST(AgreedChecks, ARefusalEveryRankReachesIsPrintedOnceByRankZero) {
  const uint64_t e = error_word("[config] zero_optimization.stage: expected 0, 1, 2 or 3");
  const std::vector<uint64_t> words = {e, e, e, e};
  EXPECT_TRUE(error_line(words, 0).print);
  EXPECT_FALSE(error_line(words, 0).with_rank);
  for (int r = 1; r < 4; ++r)
    EXPECT_FALSE(error_line(words, r).print) << r;
}

TEST(AgreedChecks, AnErrorOnlySomeRanksMeetIsPrintedByEachWithItsRank) {
  const uint64_t e = error_word("[token_file] rank 2's shard is empty");
  const std::vector<uint64_t> words = {0, 0, e, e};
  EXPECT_FALSE(error_line(words, 0).print);  // passed: the failed ranks say why
  EXPECT_FALSE(error_line(words, 1).print);
  for (int r : {2, 3}) {
    EXPECT_TRUE(error_line(words, r).print) << r;
    EXPECT_TRUE(error_line(words, r).with_rank) << r;
  }
  // Every rank failed, but not alike: each says its own, with its rank.
  const std::vector<uint64_t> mixed = {e, error_word("[config] another"), e};
  for (int r = 0; r < 3; ++r) {
    EXPECT_TRUE(error_line(mixed, r).print) << r;
    EXPECT_TRUE(error_line(mixed, r).with_rank) << r;
  }
}

TEST(AgreedChecks, ErrorWordsAreNeverZeroAndTellTextsApart) {
  EXPECT_NE(error_word(""), 0u);
  EXPECT_NE(error_word("a"), error_word("b"));
  EXPECT_EQ(error_word("same"), error_word("same"));
}

TEST(AgreedChecks, OneProcessRunsItsChecksAndTheirErrorsPropagate) {
  int runs = 0;
  agree_on_checks(nullptr, Device::cpu(), [&] { ++runs; });
  SelfCommunicator self(10.0);
  agree_on_checks(&self, Device::cpu(), [&] { ++runs; });
  EXPECT_EQ(runs, 2);
  EXPECT_THROW(agree_on_checks(&self, Device::cpu(), [] { throw ValueError("config", "bad"); }),
               ValueError);
}

}  // namespace
}  // namespace zt::comm
