// StateSwap (zero/state_swap.h): each sub-group's optimizer state round-trips bit for bit through
// fewer staging buffers than sub-groups, a changed sub-group written back is what the next load
// reads, and bad counts or layouts are one line.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "io/io_test_util.h"
#include "zerotrain/core/error.h"
#include "zerotrain/zero/state_swap.h"

namespace zt::zero {
namespace {

bool same_bytes(const Tensor& a, const Tensor& b) {
  return a.nbytes() == b.nbytes() && std::memcmp(a.data(), b.data(), a.nbytes()) == 0;
}

const std::vector<std::vector<StateSwap::Slot>> kLayout = {
    {{1000, DType::f32}, {1000, DType::f32}}, {{10, DType::bf16}}, {{3000, DType::f32}}};

TEST(StateSwap, SubGroupsRoundTripThroughTwoBuffers) {
  test::TempDir dir;
  StateSwap swap(dir.path().string(), kLayout, 2, {});
  EXPECT_EQ(swap.buffers(), 2u);
  EXPECT_EQ(swap.file_bytes(), 4096 * 2 + 4096 + 12288);
  EXPECT_EQ(swap.buffer_bytes(), 2 * 12288);
  std::vector<std::vector<Tensor>> stored;
  for (size_t s = 0; s < kLayout.size(); ++s) {
    std::vector<Tensor> tensors;
    for (size_t k = 0; k < kLayout[s].size(); ++k)
      tensors.push_back(test::random_any({kLayout[s][k].numel}, kLayout[s][k].dtype, 10 * s + k));
    swap.store(s, tensors);
    stored.push_back(tensors);
  }
  // Sub-group 0 changed in its buffer and written back; the others read as stored.
  std::vector<Tensor> first = swap.load(0);
  first[1].copy_from(test::random_any({1000}, DType::f32, 77));
  const Tensor changed = first[1].clone();
  swap.write_back(0);
  for (size_t s = 1; s < kLayout.size(); ++s) {
    const std::vector<Tensor> got = swap.load(s);
    for (size_t k = 0; k < got.size(); ++k)
      EXPECT_TRUE(same_bytes(got[k], stored[s][k])) << s << "/" << k;
    swap.write_back(s);
  }
  swap.finish();
  const std::vector<Tensor> again = swap.load(0);
  EXPECT_TRUE(same_bytes(again[0], stored[0][0]));
  EXPECT_TRUE(same_bytes(again[1], changed));
}

TEST(StateSwap, BadCountsAndLayoutsAreOneLine) {
  test::TempDir dir;
  test::expect_error<ValueError>(
      [&] { StateSwap(dir.path().string(), kLayout, 0, {}); },
      {"[config] zero_optimization.offload_optimizer.buffer_count: must be >= 1, got 0"});
  StateSwap swap(dir.path().string(), kLayout, 1, {});
  test::expect_error<ValueError>([&] { swap.store(1, {}); },
                                 {"swap sub-group 1: 0 tensors for 1 slots"});
  test::expect_error<ValueError>([&] { swap.write_back(2); },
                                 {"swap sub-group 2: written back without being loaded"});
}

}  // namespace
}  // namespace zt::zero
