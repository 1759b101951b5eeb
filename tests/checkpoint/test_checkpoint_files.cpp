// Sharded checkpoint files (checkpoint/): shards written by one split are read back by another,
// a flipped bit or a truncation is one line naming the file and tensor, the manifest refuses bad
// fields, `latest` and pruning never name or remove an incomplete or the newest checkpoint.
#include <gtest/gtest.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "io/io_test_util.h"
#include "support/test_util.h"
#include "zerotrain/checkpoint/checkpoint_reader.h"
#include "zerotrain/checkpoint/checkpoint_saver.h"
#include "zerotrain/checkpoint/checkpoint_store.h"
#include "zerotrain/checkpoint/manifest.h"
#include "zerotrain/checkpoint/shard_file.h"
#include "zerotrain/core/error.h"
#include "zerotrain/core/io_error.h"

namespace zt {
namespace {

namespace fs = std::filesystem;
using checkpoint::CheckpointReader;
using checkpoint::Manifest;

std::string bytes(const Tensor& t) {
  const Tensor c = t.clone();
  return std::string(static_cast<const char*>(c.data()), c.nbytes());
}

// Two tensors of 10 and 6 elements, split over `world` ranks in contiguous pieces (as the ZeRO
// stages split flat runs): rank r gets [r*n/world, (r+1)*n/world) of each.
const Tensor& full_a() {
  static const Tensor t = test::random_tensor({2, 5}, DType::f32, 1);
  return t;
}
const Tensor& full_b() {
  static const Tensor t = test::random_tensor({6}, DType::bf16, 2);
  return t;
}

void save_split(const fs::path& root, int world, int64_t step, int keep = 2) {
  checkpoint::SaveTarget target;
  target.root = root;
  target.world = world;
  target.run_id = "00000000abcd";
  target.keep = keep;
  Manifest header;
  header.step = step;
  header.optimizer_step = step;
  header.model_config = "{}";
  header.train_state = nlohmann::json::object();
  // Ranks 1.. first, each on its own saver, so that rank 0 finds their markers.
  for (int r = world - 1; r >= 0; --r) {
    target.rank = r;
    checkpoint::CheckpointSaver saver(target);
    checkpoint::RankShard shard;
    for (const Tensor* t : {&full_a(), &full_b()}) {
      const int64_t n = t->numel();
      const int64_t b = r * n / world, e = (r + 1) * n / world;
      if (b == e) continue;
      const std::string name = t == &full_a() ? "a" : "a.exp_avg";
      shard.write({name, t->shape(), b, e}, t->reshape({n}).slice(0, b, e), {});
    }
    saver.save(std::move(shard), header);
    saver.wait();
  }
}

Tensor read_range(CheckpointReader& reader, const std::string& name, const Tensor& full,
                  int64_t b, int64_t e) {
  Tensor out = Tensor::empty({e - b}, full.dtype(), Device::cpu());
  reader.read({name, full.shape(), b, e}, out, {});
  return out;
}

TEST(CheckpointFiles, ShardsOfOneSplitAreReadBackByAnother) {
  test::TempDir dir;
  save_split(dir.path(), 3, 5);
  const fs::path ckpt = checkpoint::resolve_checkpoint(dir.path());
  EXPECT_EQ(ckpt, dir.path() / "step-00000005");
  CheckpointReader reader(ckpt);
  EXPECT_EQ(reader.manifest().world_size, 3);
  EXPECT_EQ(reader.read_step(), 5);
  // Any range, across piece boundaries, equals the same range of the full tensor.
  for (const auto& [b, e] : std::vector<std::pair<int64_t, int64_t>>{{0, 10}, {2, 7}, {3, 4}, {9, 10}})
    EXPECT_EQ(bytes(read_range(reader, "a", full_a(), b, e)),
              bytes(full_a().reshape({10}).slice(0, b, e).clone()));
  EXPECT_EQ(bytes(read_range(reader, "a.exp_avg", full_b(), 1, 5)),
            bytes(full_b().slice(0, 1, 5).clone()));
  EXPECT_TRUE(reader.verify_all().empty());
  Tensor wrong = Tensor::empty({10}, DType::f32, Device::cpu());
  test::expect_error<ValueError>([&] { reader.read({"a", {10}, 0, 10}, wrong, {}); },
                                 {"stores a with shape [2, 5]", "[10]"});
  test::expect_error<ValueError>([&] { reader.read({"b", {10}, 0, 10}, wrong, {}); },
                                 {"has no tensor b"});
  Tensor bf = Tensor::empty({10}, DType::bf16, Device::cpu());
  test::expect_error<ValueError>([&] { reader.read({"a", {2, 5}, 0, 10}, bf, {}); },
                                 {"stores a as f32", "bf16"});
}

TEST(CheckpointFiles, AFlippedBitOrATruncationNamesTheFileAndTensor) {
  test::TempDir dir;
  save_split(dir.path(), 2, 1);
  const fs::path ckpt = dir.path() / "step-00000001";
  const fs::path file = ckpt / checkpoint::rank_file_name(1, 2);
  {
    std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(-3, std::ios::end);
    char c = 0;
    f.get(c);
    f.seekp(-3, std::ios::end);
    f.put(static_cast<char>(c ^ 0x40));
  }
  CheckpointReader reader(ckpt);
  const std::vector<std::string> problems = reader.verify_all();
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].find(file.string()), std::string::npos) << problems[0];
  EXPECT_NE(problems[0].find("fails its checksum"), std::string::npos) << problems[0];
  Tensor all = Tensor::empty({6}, DType::bf16, Device::cpu());
  test::expect_error<FormatError>([&] { reader.read({"a.exp_avg", {6}, 0, 6}, all, {}); },
                                  {file.string(), "tensor a", "fails its checksum"});

  fs::resize_file(file, fs::file_size(file) - 1);
  test::expect_error<FormatError>([&] { CheckpointReader r(ckpt); },
                                  {file.string(), "bytes, the manifest says"});
}

TEST(CheckpointFiles, ManifestFieldsAreCheckedWithTheKeyNamed) {
  Manifest m;
  m.tag = "step-00000001";
  m.model_config = "{}";
  m.train_state = nlohmann::json::object();
  m.files.push_back({"rank-00000-of-00001.safetensors", 0, 8, {{"w", {2}, 0, 2, DType::f32, 7}}});
  const nlohmann::json good = checkpoint::to_json(m);
  const Manifest back = checkpoint::manifest_from_json(good, "m.json");
  EXPECT_EQ(checkpoint::to_json(back), good);
  const auto expect_bad = [&](const char* pointer, const nlohmann::json& value,
                              std::vector<std::string> parts) {
    nlohmann::json j = good;
    j[nlohmann::json::json_pointer(pointer)] = value;
    test::expect_error<Error>([&] { checkpoint::manifest_from_json(j, "m.json"); }, parts);
  };
  expect_bad("/format", "other", {"m.json: format"});
  expect_bad("/version", 99, {"version 99 is newer"});
  expect_bad("/stage", 4, {"stage must be an integer in [0, 3]"});
  expect_bad("/dtype", "f64", {"dtype must be"});
  expect_bad("/files/0/name", "../x", {"files[0]: name must be a plain file name"});
  expect_bad("/files/0/tensors/0/end", 3, {"tensors[0]: end must be an integer in [0, 2]"});
  expect_bad("/files/0/tensors/0/crc32", "xyz", {"crc32 must be 8 hex digits"});
  expect_bad("/files/0/tensors/0/shape", nlohmann::json::array({-1}), {"shape holds"});
  // The model config travels with its CRC-32: an edit is named; a manifest without one still reads.
  EXPECT_EQ(good["model_config_crc32"], checkpoint::crc32_hex(checkpoint::crc32_of("{}", 2)));
  expect_bad("/model_config", "{\"num_hidden_layers\": 3}",
             {"m.json: model_config_crc32 ", "does not match the model_config text"});
  nlohmann::json older = good;
  older.erase("model_config_crc32");
  EXPECT_EQ(checkpoint::manifest_from_json(older, "m.json").model_config, "{}");

  EXPECT_FALSE(good.contains("weights"));
  m.weights_dtype = DType::bf16;
  const nlohmann::json with_weights = checkpoint::to_json(m);
  EXPECT_EQ(with_weights["weights"], (nlohmann::json{{"dir", "model"}, {"dtype", "bf16"}}));
  EXPECT_EQ(checkpoint::manifest_from_json(with_weights, "m.json").weights_dtype, DType::bf16);
  nlohmann::json j = with_weights;
  j["weights"]["dir"] = "../elsewhere";
  test::expect_error<Error>([&] { checkpoint::manifest_from_json(j, "m.json"); },
                            {"m.json: weights: dir must be \"model\""});
}

// Buffers made ahead of the first save (from a ShardPlan of the pieces) are the ones it copies into.
TEST(CheckpointFiles, PreparedBuffersAreTakenByTheFirstSave) {
  test::TempDir dir;
  checkpoint::SaveTarget target;
  target.root = dir.path();
  target.run_id = "00000000abcd";
  checkpoint::CheckpointSaver saver(target);
  checkpoint::ShardPlan plan;
  const Tensor a = full_a().reshape({10});
  plan.write({"a", full_a().shape(), 0, 10}, a, {});
  ASSERT_EQ(plan.specs().size(), 1u);
  EXPECT_EQ(plan.specs()[0].numel, 10);
  saver.prepare_buffers(plan.specs());
  double waited = 0;
  checkpoint::RankShard shard = saver.next_shard(waited);
  shard.write({"a", full_a().shape(), 0, 10}, a, {});
  ASSERT_EQ(shard.pieces().size(), 1u);
  EXPECT_EQ(bytes(shard.pieces()[0].host), bytes(a));
  // The same hand-over without the saver: the buffer written into is the prepared one.
  checkpoint::RankShard prepared = checkpoint::RankShard::with_buffers(plan.specs());
  const void* buffer = prepared.pieces()[0].host.data();
  checkpoint::RankShard next;
  next.reuse_buffers(std::move(prepared));
  next.write({"a", full_a().shape(), 0, 10}, a, {});
  EXPECT_EQ(next.pieces()[0].host.data(), buffer);
  Manifest header;
  header.step = 1;
  header.model_config = "{}";
  header.train_state = nlohmann::json::object();
  saver.save(std::move(shard), header);
  saver.wait();
  EXPECT_EQ(saver.next_shard(waited).pieces().size(), 0u);
}

// Large buffers are checksummed in parallel chunks joined by crc32_combine: the same CRC as one
// pass, also when continuing from an earlier one.
TEST(CheckpointFiles, ParallelCrcEqualsOnePass) {
  std::string data(size_t{40} << 20, '\0');
  uint32_t x = 12345;
  for (char& c : data)
    c = static_cast<char>((x = x * 1103515245u + 12345u) >> 24);
  const auto* p = reinterpret_cast<const Bytef*>(data.data());
  EXPECT_EQ(checkpoint::crc32_of(data.data(), data.size()),
            static_cast<uint32_t>(crc32_z(0, p, data.size())));
  const uint32_t head = checkpoint::crc32_of(data.data(), 1000);
  EXPECT_EQ(checkpoint::crc32_of(data.data() + 1000, data.size() - 1000, head),
            static_cast<uint32_t>(crc32_z(0, p, data.size())));
}

TEST(CheckpointStore, LatestNamesOnlyCompleteCheckpointsAndPruningKeepsTheNewest) {
  test::TempDir dir;
  for (int64_t step : {2, 4, 6}) save_split(dir.path(), 1, step, /*keep=*/2);
  std::vector<int64_t> steps;
  for (const auto& c : checkpoint::complete_checkpoints(dir.path())) steps.push_back(c.step);
  EXPECT_EQ(steps, (std::vector<int64_t>{4, 6}));
  EXPECT_EQ(*checkpoint::latest_checkpoint(dir.path()), dir.path() / "step-00000006");

  // A save killed before its rename leaves a partial directory: never named, and removed by the
  // next save of another run.
  fs::create_directories(dir.path() / "step-00000008.partial-0000000000ff");
  EXPECT_EQ(*checkpoint::latest_checkpoint(dir.path()), dir.path() / "step-00000006");
  test::expect_error<ValueError>(
      [&] { checkpoint::resolve_checkpoint(dir.path() / "step-00000008.partial-0000000000ff"); },
      {"is not a complete checkpoint", "COMPLETE"});
  // `latest` naming a directory that is gone (a kill between the rename aside and `latest`):
  // the newest complete one, said in a note.
  fs::remove_all(dir.path() / "step-00000006");
  std::string note;
  EXPECT_EQ(*checkpoint::latest_checkpoint(dir.path(), &note), dir.path() / "step-00000004");
  EXPECT_NE(note.find("does not name a complete checkpoint"), std::string::npos) << note;
  save_split(dir.path(), 1, 10, 2);
  EXPECT_FALSE(fs::exists(dir.path() / "step-00000008.partial-0000000000ff"));

  test::expect_error<ValueError>([&] { checkpoint::resolve_checkpoint(dir.path() / "nothing"); },
                                 {"does not exist"});
  test::TempDir empty;
  test::expect_error<ValueError>([&] { checkpoint::resolve_checkpoint(empty.path()); },
                                 {"holds no complete checkpoint"});
}

TEST(CheckpointStore, AFailedRankIsNamedAndLatestNeverPointsAtIt) {
  test::TempDir dir;
  save_split(dir.path(), 1, 1);
  checkpoint::SaveTarget target;
  target.root = dir.path();
  target.world = 2;
  target.rank = 0;
  target.run_id = "000000000001";
  target.rank_timeout = std::chrono::seconds(5);
  const fs::path work = dir.path() / "step-00000002.partial-000000000001";
  fs::create_directories(work);
  std::ofstream(work / checkpoint::rank_failure_name(1)) << "disk full";
  checkpoint::CheckpointSaver saver(target);
  Manifest header;
  header.step = 2;
  header.model_config = "{}";
  header.train_state = nlohmann::json::object();
  checkpoint::RankShard shard;
  shard.write({"a", {2, 5}, 0, 10}, full_a().reshape({10}), {});
  test::expect_error<IoError>([&] { saver.save(std::move(shard), header); },
                              {"rank 1 could not write its shard", "disk full"});
  EXPECT_EQ(*checkpoint::latest_checkpoint(dir.path()), dir.path() / "step-00000001");
}

}  // namespace
}  // namespace zt
