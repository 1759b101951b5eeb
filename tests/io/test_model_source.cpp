// What a run starts from (io/model_source.h): a directory's weights by name, a random init only
// when asked (--init random, or a config.json path), and otherwise one error naming what the
// directory holds: the silent fallbacks of issue 17 (dangling model.safetensors symlink, only
// pytorch_model.bin, a lone shard without its index, model.safetensor, only config.json).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "io/io_test_util.h"
#include "zerotrain/core/error.h"
#include "zerotrain/io/model_source.h"

namespace zt::io {
namespace {

namespace fs = std::filesystem;
using test::expect_error;
using test::TempDir;

class ModelSourceTest : public ::testing::Test {
 protected:
  void SetUp() override { test::write_bytes(dir_ / "config.json", "{}"); }
  void add(const std::string& name) { test::write_bytes(dir_ / name, "x"); }
  // Resolving the directory with the default init fails naming every one of `parts`.
  void expect_refused(const std::vector<std::string>& parts) {
    std::vector<std::string> all = parts;
    all.push_back(str("[model] ", dir_.path().string(), ": no loadable weights"));
    all.push_back(str("give --init random or ", (dir_ / "config.json").string()));
    expect_error<ValueError>([&] { resolve_model_source(dir_.path(), ModelInit::from_path); }, all);
    expect_error<ValueError>([&] { resolve_model_source(dir_.path(), ModelInit::pretrained); },
                             parts);
  }
  TempDir dir_;
};

TEST_F(ModelSourceTest, WeightsAreNamed) {
  add("model.safetensors");
  const ModelSource s = resolve_model_source(dir_.path(), ModelInit::from_path);
  EXPECT_EQ(s.weights, dir_.path());
  EXPECT_EQ(s.config, dir_ / "config.json");
  EXPECT_EQ(s.description, str("the weights of ", (dir_ / "model.safetensors").string()));
}

TEST_F(ModelSourceTest, AShardedCheckpointIsNamedByItsIndex) {
  add("model.safetensors.index.json");
  add("model-00001-of-00002.safetensors");
  const ModelSource s = resolve_model_source(dir_.path(), ModelInit::pretrained);
  EXPECT_EQ(s.weights, dir_.path());
  EXPECT_NE(s.description.find("model.safetensors.index.json"), std::string::npos);
}

TEST_F(ModelSourceTest, OnlyAConfigIsRefused) {
  add("tokenizer.json");
  expect_refused({"it holds no weight files"});
}

TEST_F(ModelSourceTest, DanglingSymlinkIsNamed) {
  fs::create_symlink("../../blobs/4f1a", dir_ / "model.safetensors");
  expect_refused({"found \"model.safetensors\", a dangling symlink (to \"../../blobs/4f1a\")"});
}

TEST_F(ModelSourceTest, PytorchWeightsAreNamed) {
  add("pytorch_model.bin");
  expect_refused({"\"pytorch_model.bin\", PyTorch weights (zerotrain reads safetensors only)"});
}

TEST_F(ModelSourceTest, AShardWithoutItsIndexIsNamed) {
  add("model-00001-of-00001.safetensors");
  expect_refused(
      {"\"model-00001-of-00001.safetensors\", a shard without model.safetensors.index.json"});
}

TEST_F(ModelSourceTest, AMisspelledFileIsNamed) {
  add("model.safetensor");
  add("README.md");
  expect_refused({"found \"model.safetensor\", not named model.safetensors"});
}

TEST_F(ModelSourceTest, ManyFilesAreListedShort) {
  for (int i = 0; i < 20; ++i)
    add(str("consolidated.", i, ".pth"));
  expect_refused({"; and 14 more"});
}

TEST_F(ModelSourceTest, RandomInitIsExplicit) {
  const ModelSource by_path = resolve_model_source(dir_ / "config.json", ModelInit::from_path);
  EXPECT_TRUE(by_path.weights.empty());
  EXPECT_EQ(by_path.description,
            str("a random init (", (dir_ / "config.json").string(), " is a config file)"));
  const ModelSource asked = resolve_model_source(dir_.path(), ModelInit::random);
  EXPECT_TRUE(asked.weights.empty());
  EXPECT_EQ(asked.description, "a random init (--init random)");
  add("model.safetensors");
  const ModelSource over_weights = resolve_model_source(dir_.path(), ModelInit::random);
  EXPECT_TRUE(over_weights.weights.empty());
  EXPECT_NE(over_weights.description.find("are not read"), std::string::npos);
  expect_error<ValueError>(
      [&] { resolve_model_source(dir_ / "config.json", ModelInit::pretrained); },
      {"--init pretrained: ", "is a config file, which holds no weights"});
  expect_error<ValueError>([&] { resolve_model_source(dir_ / "absent", ModelInit::random); },
                           {"no model config at "});
  EXPECT_EQ(parse_model_init("random"), ModelInit::random);
  expect_error<ValueError>([] { parse_model_init("tiled"); }, {"--init: ", "\"tiled\""});
}

}  // namespace
}  // namespace zt::io
