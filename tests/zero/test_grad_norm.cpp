// The chunked gradient norm ([Note: chunked gradient norm]): chunk partials do not change when a
// buffer gains trailing zeros, and the norm from shards' partials all-gathered over W ranks is
// bitwise the norm stage 0 computes from the full gradient, for several world sizes.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "zerotrain/core/device.h"
#include "zerotrain/core/error.h"
#include "zerotrain/kernels/reduce.h"
#include "zerotrain/zero/grad_norm.h"

namespace zt {
namespace {

std::vector<float> random_values(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, 1.0f);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v)
    x = d(rng);
  return v;
}

std::vector<float> partials_of(const std::vector<float>& v) {
  const Tensor t = Tensor::from_floats(v, {static_cast<int64_t>(v.size())}, DType::f32);
  Tensor out = Tensor::empty({zero::norm_chunks(t.numel())}, DType::f32);
  zero::norm_partials(t, out);
  return out.to_floats();
}

TEST(ZeroGradNorm, PartialsIgnoreTrailingZeros) {
  std::vector<float> v = random_values(5000, 1);
  const std::vector<float> a = partials_of(v);
  ASSERT_EQ(a.size(), 2u);
  double ref = 0;
  for (size_t i = 0; i < 4096; ++i)
    ref += static_cast<double>(v[i]) * v[i];
  EXPECT_NEAR(a[0], ref, 1e-5 * ref);
  v.resize(3 * zero::kNormChunk, 0.0f);
  const std::vector<float> b = partials_of(v);
  ASSERT_EQ(b.size(), 3u);
  EXPECT_EQ(a[0], b[0]);
  EXPECT_EQ(a[1], b[1]);
  EXPECT_EQ(b[2], 0.0f);
}

TEST(ZeroGradNorm, ShardedNormIsBitwiseTheFullNorm) {
  const std::vector<int64_t> group_sizes = {10000, 300, 9000};
  std::vector<std::vector<float>> groups;
  std::vector<float> full_partials;
  for (size_t g = 0; g < group_sizes.size(); ++g) {
    groups.push_back(random_values(group_sizes[g], static_cast<uint32_t>(g + 7)));
    for (float p : partials_of(groups.back()))
      full_partials.push_back(p);
  }
  const double full = zero::norm_from_partials(full_partials);
  for (int world : {1, 2, 3, 4}) {
    // Each rank's partials of its padded shard of every group, rank after rank.
    std::vector<int64_t> per_shard;
    std::vector<std::vector<float>> rank_partials(static_cast<size_t>(world));
    for (const std::vector<float>& g : groups) {
      const int64_t n = static_cast<int64_t>(g.size());
      const int64_t shard = zero::norm_chunks((n + world - 1) / world) * zero::kNormChunk;
      per_shard.push_back(shard / zero::kNormChunk);
      std::vector<float> padded(g);
      padded.resize(static_cast<size_t>(shard * world), 0.0f);
      for (int r = 0; r < world; ++r) {
        const std::vector<float> mine(padded.begin() + r * shard, padded.begin() + (r + 1) * shard);
        for (float p : partials_of(mine))
          rank_partials[static_cast<size_t>(r)].push_back(p);
      }
    }
    std::vector<float> gathered;
    for (const std::vector<float>& rp : rank_partials)
      gathered.insert(gathered.end(), rp.begin(), rp.end());
    EXPECT_EQ(zero::norm_from_gathered(gathered, per_shard, world), full) << "world " << world;
  }
  const std::vector<float> two = {1.0f, 2.0f};
  EXPECT_THROW(zero::norm_from_gathered(two, {1}, 3), ValueError);
}

// The host view of the partials: a host tensor is read where it lies; a GPU tensor lands in one
// reused page-locked buffer, with the values the device holds.
TEST(ZeroGradNorm, PartialsOnHost) {
  const std::vector<float> values = {0.5f, -1.25f, 3.0f, 7.5f, 1e-3f};
  const Tensor host = Tensor::from_floats(values, {5}, DType::f32, Device::cpu());
  Tensor unused;
  const std::span<const float> view = zero::partials_on_host(host, unused, {});
  EXPECT_EQ(view.data(), host.data_as<float>());
  EXPECT_FALSE(unused.defined());
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: the copy path needs one";
  const Stream stream = Stream::default_for(Device::cuda(0));
  const Tensor device = host.to(Device::cuda(0), stream);
  Tensor copy;
  const std::span<const float> first = zero::partials_on_host(device, copy, stream);
  ASSERT_EQ(first.size(), values.size());
  for (size_t i = 0; i < values.size(); ++i)
    EXPECT_EQ(first[i], values[i]);
  const void* buffer = copy.data();
  zero::partials_on_host(device, copy, stream);
  EXPECT_EQ(copy.data(), buffer) << "the host buffer is reused";
  EXPECT_EQ(zero::norm_from_partials(first), zero::norm_from_partials(values));
}

TEST(ZeroGradNorm, ChunkSumSquaresRejectsBadArguments) {
  const Tensor x = Tensor::zeros({10}, DType::f32);
  Tensor out = Tensor::empty({2}, DType::f32);  // 10 elements make 3 chunks of 4
  EXPECT_THROW(kernels::chunk_sum_squares(x, 4, out), ShapeError);
  Tensor ok = Tensor::empty({3}, DType::f32);
  EXPECT_THROW(kernels::chunk_sum_squares(x, 0, ok), ValueError);
  Tensor wrong_dtype = Tensor::empty({3}, DType::bf16);
  EXPECT_THROW(kernels::chunk_sum_squares(x, 4, wrong_dtype), DTypeError);
}

}  // namespace
}  // namespace zt
