// DataLoader: windows and shifted targets, determinism, disjoint rank shards that cover the epoch,
// resume from a saved state, and the last partial batch.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>

#include "data/temp_dir.h"
#include "zerotrain/data/data_loader.h"

namespace zt::data {
namespace {

// A token file whose token i is i % vocab, so a window's start tells which sequence it is.
std::shared_ptr<const TokenFile> counting_file(const test::TempDir& dir, uint64_t n,
                                               uint64_t vocab = 60000) {
  const auto path = dir / ("count_" + std::to_string(n) + ".bin");
  std::vector<uint32_t> tokens(n);
  for (uint64_t i = 0; i < n; ++i)
    tokens[i] = static_cast<uint32_t>(i % vocab);
  TokenFileWriter w(path, vocab, std::nullopt);
  w.write_document(tokens);
  w.finish();
  return std::make_shared<const TokenFile>(path);
}

DataLoaderConfig config(int64_t S, int64_t B, int rank = 0, int world = 1, bool drop_last = true) {
  DataLoaderConfig c;
  c.seq_len = S;
  c.micro_batch = B;
  c.rank = rank;
  c.world = world;
  c.seed = 1234;
  c.drop_last = drop_last;
  return c;
}

std::vector<int32_t> values(const Tensor& t) {
  const auto* p = t.data_as<int32_t>();
  return std::vector<int32_t>(p, p + t.numel());
}

// The sequence index of each row (inputs start at token seq * S, token i holds i).
std::vector<uint64_t> sequences_of(const Batch& b, int64_t S) {
  std::vector<uint64_t> out;
  const auto in = values(b.inputs);
  for (int64_t r = 0; r < b.rows; ++r)
    out.push_back(static_cast<uint64_t>(in[r * S]) / S);
  return out;
}

TEST(DataLoader, RowsAreWindowsWithShiftedTargets) {
  test::TempDir dir;
  const int64_t S = 8;
  DataLoader loader(counting_file(dir, 1001), config(S, 4));
  EXPECT_EQ(loader.sequences_per_epoch(), 125u);  // (1001 - 1) / 8
  const Batch b = loader.next();
  ASSERT_EQ(b.inputs.shape(), (Shape{4, S}));
  ASSERT_EQ(b.targets.shape(), (Shape{4, S}));
  EXPECT_EQ(b.inputs.dtype(), DType::i32);
  const auto in = values(b.inputs), tg = values(b.targets);
  for (int64_t r = 0; r < 4; ++r) {
    const int32_t start = in[r * S];
    EXPECT_EQ(start % S, 0);
    for (int64_t j = 0; j < S; ++j) {
      EXPECT_EQ(in[r * S + j], start + j);
      EXPECT_EQ(tg[r * S + j], start + j + 1);
    }
  }
}

TEST(DataLoader, SameConfigSameBatches) {
  test::TempDir dir;
  auto file = counting_file(dir, 5000);
  DataLoader a(file, config(16, 3)), b(file, config(16, 3));
  DataLoaderConfig other = config(16, 3);
  other.seed = 99;
  DataLoader c(file, other);
  bool any_difference = false;
  for (int step = 0; step < 20; ++step) {
    const Batch x = a.next(), y = b.next(), z = c.next();
    EXPECT_EQ(values(x.inputs), values(y.inputs)) << step;
    any_difference |= values(x.inputs) != values(z.inputs);
  }
  EXPECT_TRUE(any_difference);
}

TEST(DataLoader, ShardsAreDisjointAndCoverTheEpoch) {
  test::TempDir dir;
  const int64_t S = 4, B = 3;
  const int world = 4;
  auto file = counting_file(dir, 48 * S + 1);  // 48 sequences: 4 steps of 3 x 4
  std::vector<DataLoader> ranks;
  for (int r = 0; r < world; ++r)
    ranks.emplace_back(file, config(S, B, r, world));
  ASSERT_EQ(ranks[0].steps_per_epoch(), 4u);
  for (uint64_t epoch = 0; epoch < 2; ++epoch) {
    std::multiset<uint64_t> seen;
    for (int step = 0; step < 4; ++step) {
      for (auto& loader : ranks) {
        const Batch b = loader.next();
        EXPECT_EQ(b.epoch, epoch);
        EXPECT_EQ(b.rows, B);
        for (uint64_t s : sequences_of(b, S))
          seen.insert(s);
      }
    }
    EXPECT_EQ(seen.size(), 48u);
    EXPECT_EQ(std::set<uint64_t>(seen.begin(), seen.end()).size(), 48u) << "epoch " << epoch;
    for (auto& loader : ranks)
      EXPECT_EQ(loader.state(), (DataLoaderState{epoch + 1, 0}));
  }
}

TEST(DataLoader, ShardsSkipOnlyTheRemainderWhenWorldDoesNotDivide) {
  test::TempDir dir;
  const int64_t S = 4;
  const int world = 3;
  auto file = counting_file(dir, 20 * S + 1);  // 20 sequences, world 3: 6 rows per rank, 2 left
  std::set<uint64_t> seen;
  for (int r = 0; r < world; ++r) {
    DataLoader loader(file, config(S, 4, r, world, /*drop_last=*/false));
    EXPECT_EQ(loader.steps_per_epoch(), 2u);  // 4 rows, then 2
    const Batch first = loader.next(), second = loader.next();
    EXPECT_EQ(first.rows, 4);
    EXPECT_EQ(second.rows, 2);
    for (const Batch* b : {&first, &second})
      for (uint64_t s : sequences_of(*b, S))
        EXPECT_TRUE(seen.insert(s).second) << "rank " << r;
    EXPECT_EQ(loader.state(), (DataLoaderState{1, 0}));
  }
  EXPECT_EQ(seen.size(), 18u);
  // The skipped ones are the last two positions of the epoch's order.
  DataLoader probe(file, config(S, 4, 0, world, false));
  for (uint64_t pos : {18u, 19u})
    EXPECT_FALSE(seen.contains(probe.sequence_for({0, pos}, 0, 0)));
}

TEST(DataLoader, LastPartialBatch) {
  test::TempDir dir;
  const int64_t S = 4;
  auto file = counting_file(dir, 10 * S + 1);  // 10 sequences
  DataLoader keep(file, config(S, 4, 0, 1, /*drop_last=*/false));
  EXPECT_EQ(keep.steps_per_epoch(), 3u);
  EXPECT_EQ(keep.next().rows, 4);
  EXPECT_EQ(keep.next().rows, 4);
  const Batch last = keep.next();
  EXPECT_EQ(last.rows, 2);
  EXPECT_EQ(last.inputs.shape(), (Shape{2, S}));
  EXPECT_EQ(keep.next().epoch, 1u);

  DataLoader drop(file, config(S, 4, 0, 1, /*drop_last=*/true));
  EXPECT_EQ(drop.steps_per_epoch(), 2u);
  drop.next();
  const Batch second = drop.next();
  EXPECT_EQ(second.epoch, 0u);
  EXPECT_EQ(drop.state(), (DataLoaderState{1, 0}));
  const Batch third = drop.next();
  EXPECT_EQ(third.epoch, 1u);
  EXPECT_EQ(third.rows, 4);
}

TEST(DataLoader, ResumeYieldsTheSameBatches) {
  test::TempDir dir;
  auto file = counting_file(dir, 3000);
  const auto cfg = config(10, 7, 1, 2);  // rank 1 of 2; 299 sequences, 21 steps per epoch
  DataLoader reference(file, cfg);
  std::vector<std::vector<int32_t>> expected;
  for (int step = 0; step < 50; ++step)
    expected.push_back(values(reference.next().targets));

  for (int stop : {0, 1, 20, 21, 37}) {
    DataLoader first(file, cfg);
    for (int step = 0; step < stop; ++step)
      first.next();
    const std::string saved = to_json(first.state()).dump();
    DataLoader resumed(file, cfg, data_loader_state_from_json(nlohmann::json::parse(saved)));
    for (int step = stop; step < 50; ++step)
      ASSERT_EQ(values(resumed.next().targets), expected[static_cast<size_t>(step)])
          << "resumed after " << stop << " steps, step " << step;
  }
}

TEST(DataLoader, ResumeWithAnotherWorldContinuesTheOrder) {
  test::TempDir dir;
  auto file = counting_file(dir, 64 * 4 + 1);  // 64 sequences of S = 4
  // Two steps with world 2 and B 4 consume positions [0, 16); then world 4 takes over.
  DataLoader w2(file, config(4, 4, 0, 2));
  w2.next();
  w2.next();
  EXPECT_EQ(w2.state(), (DataLoaderState{0, 16}));
  std::set<uint64_t> rest;
  for (int r = 0; r < 4; ++r) {
    DataLoader w4(file, config(4, 4, r, 4), w2.state());
    for (int step = 0; step < 3; ++step)
      for (uint64_t s : sequences_of(w4.next(), 4))
        EXPECT_TRUE(rest.insert(s).second);
  }
  std::set<uint64_t> expected;
  for (uint64_t pos = 16; pos < 64; ++pos)
    expected.insert(w2.sequence_for({0, pos}, 0, 0));
  EXPECT_EQ(rest, expected);
}

TEST(DataLoader, StateJsonAndErrors) {
  test::TempDir dir;
  auto file = counting_file(dir, 101);
  EXPECT_EQ(to_json(DataLoaderState{3, 40}).dump(), R"({"epoch":3,"next_index":40})");
  EXPECT_EQ(data_loader_state_from_json(nlohmann::json::parse(R"({"epoch":3,"next_index":40})")),
            (DataLoaderState{3, 40}));
  EXPECT_THROW(data_loader_state_from_json(nlohmann::json::parse(R"({"epoch":3})")), ValueError);
  EXPECT_THROW(data_loader_state_from_json(nlohmann::json::parse(R"({"epoch":-1,"next_index":0})")),
               ValueError);
  EXPECT_THROW(DataLoader(file, config(10, 4), DataLoaderState{0, 11}), ValueError);
  EXPECT_THROW(DataLoader(file, config(10, 11)), ValueError);  // 10 sequences < one step
  EXPECT_THROW(DataLoader(file, config(0, 1)), ValueError);
  EXPECT_THROW(DataLoader(file, config(10, 1, 2, 2)), ValueError);
  EXPECT_NO_THROW(DataLoader(file, config(10, 11, 0, 1, /*drop_last=*/false)));
}

}  // namespace
}  // namespace zt::data
