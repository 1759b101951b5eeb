// ParamSwap (zero/param_swap.h): stage 3's value shards in a swap file, staged through a few
// buffers: every shard round-trips bit for bit through pin and load; groups pack into units of
// buffer_size elements, each read once while resident; a store updates a resident unit and the
// file; the least recently used buffer is reused; a second thread waits for an unpin; all buffers
// pinned by one thread is one line. max_in_cpu keeps units in cache buffers: covering every unit,
// none is read twice; smaller, the least recently used is evicted and stored values survive it;
// 0 reads as the staging buffers alone.
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

// Staging buffers alone unless max_in_cpu says otherwise.
ParamOffload target(const test::TempDir& dir, int64_t buffer_size, int64_t buffer_count,
                    int64_t max_in_cpu = 0) {
  ParamOffload t;
  t.device = OffloadDevice::nvme;
  t.nvme_path = dir.path().string();
  t.buffer_size = buffer_size;
  t.buffer_count = buffer_count;
  t.max_in_cpu = max_in_cpu;
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
  swap.pin(2);                           // the one buffer now holds unit 1
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

int64_t pin_reads(ParamSwap& swap, size_t g) {
  const int64_t before = swap.bytes_read();
  swap.pin(g);
  swap.unpin(g, {});
  return swap.bytes_read() - before;
}

// buffer_size 1: four units in buffers of 12288 bytes, 3072 elements of the widest dtype (f32).
TEST(ParamSwap, ACacheCoveringEveryUnitReadsEachOnce) {
  test::TempDir dir;
  ParamSwap swap(four_shards(), target(dir, 1, 1, 3 * 3072), {}, Device::cpu());
  EXPECT_EQ(swap.buffer_bytes(), 12288);
  EXPECT_EQ(swap.cache_bytes(), 3 * 12288);
  std::vector<Tensor> values = store_random(swap, four_shards(), 31);
  const int64_t before = swap.bytes_read();
  for (size_t g = 0; g < values.size(); ++g) {
    EXPECT_TRUE(same_bytes(swap.pin(g), values[g])) << "group " << g;
    swap.unpin(g, {});
  }
  const int64_t first_pass = swap.bytes_read() - before;
  EXPECT_EQ(first_pass, 32768);  // every unit once
  values[1] = test::random_any({3000}, DType::f32, 32);
  swap.store(1, values[1], {});
  values[3] = test::random_any({5000}, DType::bf16, 33);
  swap.store(3, values[3], {});
  for (int pass = 0; pass < 3; ++pass)
    for (size_t g = 0; g < values.size(); ++g) {
      EXPECT_TRUE(same_bytes(swap.pin(g), values[g])) << "pass " << pass << " group " << g;
      swap.unpin(g, {});
      const Tensor back = Tensor::empty({values[g].numel()}, values[g].dtype());
      swap.load(g, back);
      EXPECT_TRUE(same_bytes(back, values[g])) << "pass " << pass << " group " << g;
    }
  EXPECT_EQ(swap.bytes_read() - before, first_pass);  // nothing read again
  // A cache at most as large as the units: a larger max_in_cpu allocates no more.
  test::TempDir other;
  EXPECT_EQ(
      ParamSwap(four_shards(), target(other, 1, 2, 1'000'000'000), {}, Device::cpu()).cache_bytes(),
      2 * 12288);
}

TEST(ParamSwap, ACacheSmallerThanTheUnitsEvictsTheLeastRecentlyUsed) {
  test::TempDir dir;
  // One staging and one cache buffer (3072 to 6143 elements hold one): two of four units.
  ParamSwap swap(four_shards(), target(dir, 1, 1, 6000), {}, Device::cpu());
  EXPECT_EQ(swap.cache_bytes(), 12288);
  std::vector<Tensor> values = store_random(swap, four_shards(), 41);
  EXPECT_EQ(pin_reads(swap, 0), 4096);
  EXPECT_EQ(pin_reads(swap, 1), 12288);
  EXPECT_EQ(pin_reads(swap, 0), 0);  // both resident
  EXPECT_EQ(pin_reads(swap, 1), 0);
  values[1] = test::random_any({3000}, DType::f32, 42);
  swap.store(1, values[1], {});  // into the resident unit, and the file
  values[0] = test::random_any({1000}, DType::bf16, 43);
  swap.store(0, values[0], {});
  EXPECT_EQ(pin_reads(swap, 2), 4096);   // evicts unit 1, used longest ago
  EXPECT_EQ(pin_reads(swap, 3), 12288);  // evicts unit 0
  EXPECT_EQ(pin_reads(swap, 2), 0);
  for (size_t g : {1, 0}) {
    const int64_t before = swap.bytes_read();
    EXPECT_TRUE(same_bytes(swap.pin(g), values[g])) << "group " << g;
    swap.unpin(g, {});
    EXPECT_GT(swap.bytes_read(), before) << "group " << g << " was not evicted";
  }
  values[2] = test::random_any({10}, DType::bf16, 44);
  swap.store(2, values[2], {});  // unit 2 no longer resident: through a free buffer to the file
  for (size_t g = 0; g < values.size(); ++g) {
    const Tensor back = Tensor::empty({values[g].numel()}, values[g].dtype());
    swap.load(g, back);
    EXPECT_TRUE(same_bytes(back, values[g])) << "group " << g;
  }
}

TEST(ParamSwap, AllStagingAndCacheBuffersPinnedIsOneLine) {
  test::TempDir dir;
  ParamSwap swap(four_shards(), target(dir, 1, 1, 3072), {}, Device::cpu());
  store_random(swap, four_shards(), 61);
  swap.pin(0);
  swap.pin(1);  // into the cache buffer, allocated now
  test::expect_error<ValueError>([&] { swap.pin(2); },
                                 {"[config] zero_optimization.offload_param.buffer_count: all 2 "
                                  "staging and cache buffers are in use at once"});
  swap.unpin(1, {});
  EXPECT_EQ(pin_reads(swap, 2), 4096);  // into the buffer of unit 1
  swap.unpin(0, {});
}

TEST(ParamSwap, MaxInCpuZeroIsTheStagingBuffersAlone) {
  test::TempDir dir;
  ParamSwap swap(four_shards(), target(dir, 1, 2, 0), {}, Device::cpu());
  EXPECT_EQ(swap.cache_bytes(), 0);
  EXPECT_EQ(swap.buffer_bytes(), 2 * 12288);
  store_random(swap, four_shards(), 51);
  // Two passes over four units through two buffers: every pin reads its unit.
  for (int pass = 0; pass < 2; ++pass)
    for (size_t g = 0; g < 4; ++g)
      EXPECT_EQ(pin_reads(swap, g), g % 2 == 0 ? 4096 : 12288) << "pass " << pass << " group " << g;
  // 3071 elements hold no buffer of 3072: no cache either.
  test::TempDir other;
  EXPECT_EQ(ParamSwap(four_shards(), target(other, 1, 2, 3071), {}, Device::cpu()).cache_bytes(),
            0);
}

TEST(ParamSwap, AMissingPathNamesItAndTheBytes) {
  test::TempDir dir;
  ParamOffload t = target(dir, 1, 2);
  t.nvme_path = (dir / "absent").string();
  test::expect_error<ValueError>(
      [&] { ParamSwap(four_shards(), t, {}, Device::cpu()); },
      {"[offload] nvme_path ",
       "absent does not exist (make the directory first); the swap files "
       "need 32.0 KiB"});
}

}  // namespace
}  // namespace zt::zero
