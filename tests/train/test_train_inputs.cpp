// The trainer's inputs checked before the first step: a model directory without loadable weights
// stops the run naming what it holds (no silent random init), --init random trains from the
// config and says so, a token id outside the vocabulary stops the run naming the token file, the
// offset and the id before any step is taken (no metrics written); sequences past the model's
// positions (every family), negative clipping and an --out that cannot be made are one line.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <string>

#include "io/io_test_util.h"
#include "support/token_fixture.h"
#include "train/train_test_util.h"
#include "zerotrain/core/error.h"
#include "zerotrain/core/io_error.h"
#include "zerotrain/data/token_file.h"
#include "zerotrain/train/trainer.h"

namespace zt {
namespace {

namespace fs = std::filesystem;

// The tiny run with its config.json moved into a model directory `dir/model`.
train::TrainConfig config_in_directory(const test::TempDir& dir) {
  train::TrainConfig c = test::tiny_train_config(dir.path(), DType::f32);
  fs::create_directories(dir / "model");
  fs::rename(dir / "config.json", dir / "model" / "config.json");
  c.paths.model = dir / "model";
  c.paths.out = dir / "run";
  c.steps = 1;
  c.data.grad_accum = 1;
  return c;
}

TEST(TrainInputs, ADirectoryWithoutWeightsIsNotSilentlyRandom) {
  test::TempDir dir;
  train::TrainConfig c = config_in_directory(dir);
  fs::create_symlink("../blobs/gone", dir / "model" / "model.safetensors");
  test::expect_error<ValueError>([&] { train::train(c); }, {"[model] ", "no loadable weights",
                                                            "a dangling symlink", "--init random"});
  EXPECT_FALSE(fs::exists(c.paths.out / "metrics.jsonl"));
}

TEST(TrainInputs, RandomInitWhenAskedAndSaid) {
  test::TempDir dir;
  train::TrainConfig c = config_in_directory(dir);
  c.paths.init = io::ModelInit::random;
  const train::TrainSummary s = train::train(c);
  EXPECT_EQ(s.init, "a random init (--init random), seed 7");
  c.paths.model = dir / "model" / "config.json";
  c.paths.init = io::ModelInit::from_path;
  c.paths.out = dir / "by_path";
  EXPECT_EQ(train::train(c).init,
            str("a random init (", c.paths.model.string(), " is a config file), seed 7"));
}

TEST(TrainInputs, ATokenOutsideTheVocabularyStopsTheRunBeforeTheFirstStep) {
  test::TempDir dir;
  train::TrainConfig c = config_in_directory(dir);
  c.paths.init = io::ModelInit::random;
  // Token 500 of the 600 becomes 60000: past the header's and the model's vocabulary of 50.
  std::string bytes = test::read_bytes(c.paths.data);
  const uint16_t bad = 60000;
  std::memcpy(bytes.data() + 64 + 2 * 500, &bad, 2);
  test::write_bytes(c.paths.data, bytes);
  test::expect_error<data::TokenFileError>(
      [&] { train::train(c); },
      {c.paths.data.string(), ": token 500 (byte offset 1064) is 60000, not below vocab_size 50"});
  EXPECT_FALSE(fs::exists(c.paths.out / "metrics.jsonl"));
}

TEST(TrainInputs, SequencesPastThePositionsOfEveryFamilyAreRefused) {
  test::TempDir dir;
  train::TrainConfig c = config_in_directory(dir);
  c.paths.init = io::ModelInit::random;
  c.data.seq_len = 17;  // the tiny llama has max_position_embeddings 16
  test::expect_error<ValueError>(
      [&] { train::train(c); },
      {"[train] seq_len 17 (--seq-len) exceeds the model's max_position_embeddings 16"});
}

TEST(TrainInputs, NegativeClippingIsRefused) {
  test::TempDir dir;
  train::TrainConfig c = config_in_directory(dir);
  c.clip = -1;
  test::expect_error<ValueError>([&] { train::validate_train_config(c); },
                                 {"gradient_clipping (--clip): must be >= 0 (0: off), got -1"});
}

TEST(TrainInputs, AnOutputDirectoryThatCannotBeMadeIsOneLine) {
  test::TempDir dir;
  train::TrainConfig c = config_in_directory(dir);
  c.paths.init = io::ModelInit::random;
  c.paths.out = dir / "model" / "config.json" / "run";  // under a file
  test::expect_error<IoError>(
      [&] { train::train(c); },
      {str("[train] --out ", c.paths.out.string(), ": cannot create the directory: ")});
}

}  // namespace
}  // namespace zt
