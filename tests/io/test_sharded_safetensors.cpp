// Sharded checkpoints: the split rule of huggingface_hub, byte-exact shards and index against a
// reference checkpoint (tests/fixtures/safetensors/sharded/), reading through the index,
// single-file checkpoints, stale-file removal, and every malformed index named.
#include <gtest/gtest.h>

#include "io/io_test_util.h"
#include "io/safetensors_fixtures.h"
#include "zerotrain/core/io_error.h"
#include "zerotrain/io/sharded_safetensors.h"

namespace zt::io {
namespace {

using test::expect_bitwise_equal;
using test::expect_error;
using test::list_dir;
using test::TempDir;

using Shards = std::vector<std::vector<size_t>>;

TEST(ShardedSafetensors, PlanFollowsTheHuggingFaceSplit) {
  // The oversized tensor gets its own shard, placed before the shard still being filled.
  ShardPlan p = plan_shards({40, 16, 100, 24, 8}, 64);
  EXPECT_EQ(p.shards, (Shards{{2}, {0, 1}, {3, 4}}));
  EXPECT_EQ(p.total_size, 188u);
  EXPECT_EQ(plan_shards({10, 20, 30}, 60).shards, (Shards{{0, 1, 2}}));
  EXPECT_EQ(plan_shards({10, 20, 31}, 60).shards, (Shards{{0, 1}, {2}}));
  EXPECT_EQ(plan_shards({70, 80}, 60).shards, (Shards{{0}, {1}}));
  EXPECT_TRUE(plan_shards({}, 60).shards.empty());
  EXPECT_THROW(plan_shards({1}, 0), ValueError);
  EXPECT_EQ(shard_file_name(1, 5), "model-00002-of-00005.safetensors");
  EXPECT_EQ(shard_file_name(0, 1), "model.safetensors");
}

TEST(ShardedSafetensors, ReadsAReferenceCheckpoint) {
  ShardedReader r(test::safetensors_fixture("sharded"));
  EXPECT_TRUE(r.sharded());
  EXPECT_EQ(r.files().size(), 3u);
  EXPECT_EQ(r.total_size(), 188u);
  const auto expected = test::sharded_fixture_tensors();
  EXPECT_EQ(r.names().size(), expected.size());
  for (const NamedTensor& nt : expected)
    expect_bitwise_equal(nt.tensor, r.read(nt.name, nt.tensor.dtype()), nt.name);
  EXPECT_EQ(r.file_of("model.big.weight").path().filename(), "model-00001-of-00003.safetensors");
  Tensor rows = Tensor::zeros({2, 5}, DType::bf16);
  r.read_rows("model.big.weight", 3, 5, rows);
  EXPECT_EQ(rows.to_floats(),
            test::seq(25, 0.5, -12, DType::f32, {5, 5}).slice(0, 3, 5).contiguous().to_floats());
  expect_error<ValueError>([&] { r.entry("nope"); }, {"no tensor \"nope\""});
}

TEST(ShardedSafetensors, WritesTheReferenceBytes) {
  TempDir dir;
  SafetensorsWriteOptions opt;
  opt.metadata = {{"format", "pt"}};
  const auto written = write_sharded_safetensors(dir.path(), test::sharded_fixture_tensors(),
                                                 test::kShardedFixtureLimit, opt);
  EXPECT_EQ(written, (std::vector<std::string>{"model-00001-of-00003.safetensors",
                                               "model-00002-of-00003.safetensors",
                                               "model-00003-of-00003.safetensors"}));
  const auto ref = test::safetensors_fixture("sharded");
  EXPECT_EQ(list_dir(dir.path()), list_dir(ref));
  for (const std::string& f : list_dir(ref))
    EXPECT_EQ(test::read_bytes(dir / f), test::read_bytes(ref / f)) << f;
}

TEST(ShardedSafetensors, OneFileWhenEverythingFits) {
  TempDir dir;
  const auto tensors = test::sharded_fixture_tensors();
  const auto written = write_sharded_safetensors(dir / "out", tensors, kDefaultMaxShardBytes);
  EXPECT_EQ(written, (std::vector<std::string>{"model.safetensors"}));
  EXPECT_EQ(list_dir(dir / "out"), (std::vector<std::string>{"model.safetensors"}));
  ShardedReader r(dir / "out");
  EXPECT_FALSE(r.sharded());
  EXPECT_FALSE(r.total_size().has_value());
  for (const NamedTensor& nt : tensors)
    expect_bitwise_equal(nt.tensor, r.read(nt.name, nt.tensor.dtype()), nt.name);
}

TEST(ShardedSafetensors, ConvertsAndShardsByStoredSize) {
  TempDir dir;
  SafetensorsWriteOptions opt;
  opt.float_dtype = DType::bf16;
  // 40 + 16 bytes in f32 are 20 + 8 in bf16: one 28-byte shard holds both.
  const auto written = write_sharded_safetensors(
      dir.path(), {{"a", Tensor::zeros({10}, DType::f32)}, {"b", Tensor::zeros({4}, DType::f32)}},
      28, opt);
  EXPECT_EQ(written.size(), 1u);
}

TEST(ShardedSafetensors, LaterSaveRemovesStaleWeightFiles) {
  TempDir dir;
  const auto tensors = test::sharded_fixture_tensors();
  test::write_bytes(dir / "README.md", "not a weight file");
  write_sharded_safetensors(dir.path(), tensors, 64);
  EXPECT_EQ(list_dir(dir.path()).size(), 5u);
  write_sharded_safetensors(dir.path(), tensors, 1000);
  EXPECT_EQ(list_dir(dir.path()), (std::vector<std::string>{"README.md", "model.safetensors"}));
  write_sharded_safetensors(dir.path(), tensors, 160);
  EXPECT_EQ(list_dir(dir.path()),
            (std::vector<std::string>{"README.md", "model-00001-of-00002.safetensors",
                                      "model-00002-of-00002.safetensors",
                                      "model.safetensors.index.json"}));
  EXPECT_EQ(ShardedReader(dir.path()).names().size(), tensors.size());
}

TEST(ShardedSafetensors, WriterRefusesRepeatedNames) {
  TempDir dir;
  const Tensor t = Tensor::zeros({2}, DType::f32);
  expect_error<ValueError>(
      [&] {
        write_sharded_safetensors(dir.path(), {{"a", t}, {"a", t}}, 4);
      },
      {"\"a\" given twice"});
  EXPECT_TRUE(list_dir(dir.path()).empty());
}

class ShardedIndexErrors : public ::testing::Test {
 protected:
  void SetUp() override {
    write_sharded_safetensors(dir_.path(), test::sharded_fixture_tensors(), 64);
  }
  void expect_index_refused(const std::string& index, const std::vector<std::string>& parts) {
    test::write_bytes(dir_ / kWeightsIndexFile, index);
    std::vector<std::string> all = parts;
    all.push_back("model.safetensors.index.json");
    expect_error<FormatError>([&] { ShardedReader r(dir_.path()); }, all);
  }
  TempDir dir_;
};

TEST_F(ShardedIndexErrors, EveryProblemIsNamed) {
  expect_index_refused("{\"weight_map\": ", {"not valid JSON"});
  expect_index_refused("[]", {"expected a JSON object"});
  expect_index_refused(
      R"({"weight_map": )" + std::string(70000, '[') + std::string(70000, ']') + "}",
      {"not valid JSON: nested deeper than 64 levels"});
  expect_index_refused(R"({"metadata": {}})", {"missing \"weight_map\""});
  expect_index_refused(R"({"weight_map": []})", {"weight_map: expected an object"});
  expect_index_refused(R"({"weight_map": {"x": 3}})",
                       {"weight_map[\"x\"]", "expected a file name"});
  expect_index_refused(R"({"weight_map": {"x": "../model-00001-of-00003.safetensors"}})",
                       {"not a file name in the directory"});
  expect_index_refused(R"({"weight_map": {"x": "model-00009-of-00009.safetensors"}})",
                       {"tensor \"x\"", "model-00009-of-00009.safetensors", "does not exist"});
  expect_index_refused(
      R"({"weight_map": {"lm_head.weight": "model-00001-of-00003.safetensors"}})",
      {"tensor \"lm_head.weight\"", "model-00001-of-00003.safetensors", "does not hold it"});
  expect_index_refused(R"({"metadata": {"total_size": "big"}, "weight_map": {}})",
                       {"metadata.total_size", "a string \"big\""});
}

TEST(ShardedSafetensors, EmptyDirectoryIsNamed) {
  TempDir dir;
  expect_error<IoError>([&] { ShardedReader r(dir.path()); },
                        {dir.path().string(), "model.safetensors", "model.safetensors.index.json"});
}

}  // namespace
}  // namespace zt::io
