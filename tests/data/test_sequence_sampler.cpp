// The per-epoch permutation: a bijection for any size, fixed by (seed, epoch), different across
// epochs and seeds.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

#include "zerotrain/core/error.h"
#include "zerotrain/data/sequence_sampler.h"

namespace zt::data {
namespace {

std::vector<uint64_t> order(const SequenceSampler& s, uint64_t epoch) {
  std::vector<uint64_t> out(s.size());
  for (uint64_t i = 0; i < s.size(); ++i)
    out[i] = s.sequence_at(epoch, i);
  return out;
}

bool is_permutation_of_iota(std::vector<uint64_t> v) {
  std::sort(v.begin(), v.end());
  for (uint64_t i = 0; i < v.size(); ++i)
    if (v[i] != i) return false;
  return true;
}

TEST(SequenceSampler, FeistelIsABijectionForAnySize) {
  for (uint64_t n :
       {1ull, 2ull, 3ull, 4ull, 5ull, 7ull, 16ull, 17ull, 100ull, 1000ull, 4097ull, 65536ull}) {
    FeistelPermutation p(n, 12345);
    std::vector<uint64_t> v(n);
    for (uint64_t i = 0; i < n; ++i)
      v[i] = p(i);
    EXPECT_TRUE(is_permutation_of_iota(v)) << "n = " << n;
  }
  EXPECT_THROW(FeistelPermutation(0, 1), ValueError);
  EXPECT_THROW(FeistelPermutation(10, 1)(10), ValueError);
}

TEST(SequenceSampler, DeterministicPerSeedAndEpoch) {
  const SequenceSampler a(1000, 42, true), b(1000, 42, true), c(1000, 43, true);
  EXPECT_EQ(order(a, 0), order(b, 0));
  EXPECT_EQ(order(a, 5), order(b, 5));
  EXPECT_NE(order(a, 0), order(a, 1));
  EXPECT_NE(order(a, 0), order(c, 0));
  EXPECT_TRUE(is_permutation_of_iota(order(a, 3)));
  std::vector<uint64_t> iota(1000);
  std::iota(iota.begin(), iota.end(), 0);
  EXPECT_NE(order(a, 0), iota);  // actually shuffled
}

TEST(SequenceSampler, ShuffledPositionsSpreadOut) {
  // Consecutive positions should not map to consecutive sequences (a weak mixing check).
  const SequenceSampler s(10000, 7, true);
  int adjacent = 0;
  for (uint64_t i = 0; i + 1 < s.size(); ++i) {
    const auto a = s.sequence_at(0, i), b = s.sequence_at(0, i + 1);
    adjacent += (a + 1 == b || b + 1 == a) ? 1 : 0;
  }
  EXPECT_LT(adjacent, 50);
}

TEST(SequenceSampler, WithoutShuffleIsTheIdentity) {
  const SequenceSampler s(50, 9, false);
  for (uint64_t i = 0; i < 50; ++i)
    EXPECT_EQ(s.sequence_at(3, i), i);
  EXPECT_THROW(s.sequence_at(0, 50), ValueError);
}

}  // namespace
}  // namespace zt::data
