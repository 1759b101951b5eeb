// ParamSwap (zero/param_swap.h): stage 3's value shards in a swap file, staged through a few
// buffers: every shard round-trips bit for bit through pin and load; groups pack into units of
// buffer_size elements, each read once while resident; a store updates a resident unit and the
// file; the least recently used buffer is reused; a second thread waits for an unpin; all buffers
// pinned by one thread is one line.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "io/io_test_util.h"
#include "zerotrain/core/error.h"
#include "zerotrain/zero/param_swap.h"

namespace zt::zero {
namespace {

bool same_bytes(const Tensor& a, const Tensor& b) {
  return a.nbytes() == b.nbytes() && std::memcmp(a.data(), b.data(), a.nbytes()) == 0;
}

// Four shards: 4096, 12288, 4096 and 12288 bytes once aligned.
std::vector<ParamSwap::Shard> four_shards() {
  return {{1000, DType::bf16}, {3000, DType::f32}, {10, DType::bf16}, {5000, DType::bf16}};
}

ParamOffload target(const test::TempDir& dir, int64_t buffer_size, int64_t buffer_count) {
  ParamOffload t;
  t.device = OffloadDevice::nvme;
  t.nvme_path = dir.path().string();
  t.buffer_size = buffer_size;
  t.buffer_count = buffer_count;
  return t;
}

std::vector<Tensor> store_random(ParamSwap& swap, const std::vector<ParamSwap::Shard>& shards,
                                 uint64_t seed) {
  std::vector<Tensor> values;
  for (size_t g = 0; g < shards.size(); ++g) {
    values.push_back(test::random_any({shards[g].numel}, shards[g].dtype, seed + g));
    swap.store(g, values.back(), {});
  }
  return values;
}

TEST(ParamSwap, EveryShardRoundTripsThroughTwoBuffers) {
  test::TempDir dir;
  ParamSwap swap(four_shards(), target(dir, 1, 2), {}, Device::cpu());
  EXPECT_EQ(swap.units(), 4u);  // buffer_size 1: one group per read
  EXPECT_EQ(swap.file_bytes(), 32768);
  EXPECT_EQ(swap.buffer_bytes(), 2 * 12288);
  const std::vector<Tensor> values = store_random(swap, four_shards(), 7);
  for (size_t g = 0; g < values.size(); ++g) {
    EXPECT_TRUE(same_bytes(swap.pin(g), values[g])) << "group " << g;
    swap.unpin(g, {});
    const Tensor back = Tensor::empty({values[g].numel()}, values[g].dtype());
    swap.load(g, back);
    EXPECT_TRUE(same_bytes(back, values[g])) << "group " << g;
  }
  EXPECT_THROW(swap.load(0, Tensor::empty({999}, DType::bf16)), ValueError);
  EXPECT_THROW(swap.store(1, Tensor::empty({3000}, DType::bf16), {}), ValueError);
}

TEST(ParamSwap, GroupsPackIntoUnitsReadOnce) {
  test::TempDir dir;
  // 4000 f32 elements: 16384 bytes hold groups 0+1 and groups 2+3.
  ParamSwap swap(four_shards(), target(dir, 4000, 2), {}, Device::cpu());
  EXPECT_EQ(swap.units(), 2u);
  EXPECT_EQ(swap.buffer_bytes(), 2 * 16384);
  const std::vector<Tensor> values = store_random(swap, four_shards(), 11);
  const int64_t before = swap.bytes_read();
  for (size_t g = 0; g < values.size(); ++g) {
    EXPECT_TRUE(same_bytes(swap.pin(g), values[g])) << "group " << g;
    swap.unpin(g, {});
  }
  EXPECT_EQ(swap.bytes_read() - before, 2 * 16384);  // each unit read once, whole
}

TEST(ParamSwap, StoreUpdatesTheResidentUnitAndTheFile) {
  test::TempDir dir;
  ParamSwap swap(four_shards(), target(dir, 4000, 1), {}, Device::cpu());
  std::vector<Tensor> values = store_random(swap, four_shards(), 3);
  swap.pin(0);
  swap.unpin(0, {});  // unit 0 (groups 0, 1) resident
  const int64_t before = swap.bytes_read();
  values[1] = test::random_any({3000}, DType::f32, 99);
  swap.store(1, values[1], {});
  EXPECT_TRUE(same_bytes(swap.pin(1), values[1]));
  swap.unpin(1, {});
  EXPECT_EQ(swap.bytes_read(), before);  // served by the resident buffer
  swap.pin(2);  // the one buffer now holds unit 1
  swap.unpin(2, {});
  EXPECT_TRUE(same_bytes(swap.pin(1), values[1]));  // read back from the file
  swap.unpin(1, {});
  EXPECT_TRUE(same_bytes(swap.pin(0), values[0]));
  swap.unpin(0, {});
}

TEST(ParamSwap, TheLeastRecentlyUsedBufferIsReused) {
  test::TempDir dir;
  ParamSwap swap(four_shards(), target(dir, 1, 2), {}, Device::cpu());
  store_random(swap, four_shards(), 5);
  const auto pin_reads = [&](size_t g) {
    const int64_t before = swap.bytes_read();
    swap.pin(g);
    swap.unpin(g, {});
    return swap.bytes_read() - before;
  };
  EXPECT_EQ(pin_reads(0), 4096);
  EXPECT_EQ(pin_reads(1), 12288);
  EXPECT_EQ(pin_reads(0), 0);     // resident
  EXPECT_EQ(pin_reads(2), 4096);  // replaces group 1, used longest ago
  EXPECT_EQ(pin_reads(0), 0);
  EXPECT_EQ(pin_reads(1), 12288);
}

TEST(ParamSwap, AllBuffersPinnedIsOneLine) {
  test::TempDir dir;
  ParamSwap swap(four_shards(), target(dir, 1, 1), {}, Device::cpu());
  store_random(swap, four_shards(), 1);
  swap.pin(0);
  test::expect_error<ValueError>([&] { swap.pin(2); },
                                 {"[config] zero_optimization.offload_param.buffer_count: all 1 "
                                  "staging buffers are in use at once"});
  swap.unpin(0, {});
  swap.pin(2);
  swap.unpin(2, {});
}

// The engine's two threads: a gather pins a shard while the host optimizer stores another group
// of the same unit (allowed) and loads a unit that needs the one buffer (it waits for the unpin).
TEST(ParamSwap, AnotherThreadWaitsForTheUnpinAndMayStoreBesideAPin) {
  test::TempDir dir;
  ParamSwap swap(four_shards(), target(dir, 4000, 1), {}, Device::cpu());
  std::vector<Tensor> values = store_random(swap, four_shards(), 21);
  const Tensor pinned = swap.pin(0);  // unit 0 (groups 0, 1) in the one buffer
  values[1] = test::random_any({3000}, DType::f32, 77);
  std::atomic<bool> loaded{false};
  std::thread optimizer([&] {
    swap.store(1, values[1], {});  // beside the pin, into the resident unit
    const Tensor back = Tensor::empty({10}, DType::bf16);
    swap.load(2, back);  // unit 1 needs the buffer: waits for the unpin
    loaded = true;
    EXPECT_TRUE(same_bytes(back, values[2]));
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(loaded) << "a pinned buffer was taken";
  EXPECT_TRUE(same_bytes(pinned, values[0]));
  swap.unpin(0, {});
  optimizer.join();
  EXPECT_TRUE(loaded);
  EXPECT_TRUE(same_bytes(swap.pin(1), values[1]));  // read back from the file
  swap.unpin(1, {});
}

TEST(ParamSwap, AMissingPathNamesItAndTheBytes) {
  test::TempDir dir;
  ParamOffload t = target(dir, 1, 2);
  t.nvme_path = (dir / "absent").string();
  test::expect_error<ValueError>(
      [&] { ParamSwap(four_shards(), t, {}, Device::cpu()); },
      {"[offload] nvme_path ", "absent does not exist (make the directory first); the swap files "
                               "need 32.0 KiB"});
}

}  // namespace
}  // namespace zt::zero
