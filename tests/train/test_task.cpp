// The causal LM task (train/task.h): its data, what a micro-batch puts into the step context and
// what the step clears, and the token count of the rates.
#include <gtest/gtest.h>

#include <string>

#include "io/io_test_util.h"
#include "train/train_test_util.h"
#include "zerotrain/core/error.h"
#include "zerotrain/train/task.h"

namespace zt {
namespace {

TEST(CausalLmTask, LoadsAMicroBatchAndClearsTheStepsCount) {
  test::TempDir dir;
  const train::TrainConfig c = test::tiny_train_config(dir.path(), DType::f32);
  const nn::ModelConfig mc = test::tiny_config(nn::Family::llama);
  const train::CausalLmTask task;
  data::DataLoader loader = task.open_data(c.paths.data, c.data, mc, 0, 1, {});
  const data::Batch batch = loader.next();

  nn::StepContext ctx;
  ctx.num_items_in_batch = 123;  // the step's global count, set by the trainer
  task.load_micro_batch(batch, ctx);
  EXPECT_EQ(ctx.tokens.to_ints(), batch.inputs.to_ints());
  EXPECT_EQ(ctx.targets.to_ints(), batch.targets.to_ints());
  EXPECT_EQ(ctx.tokens.size(0), c.data.micro_batch);
  EXPECT_EQ(ctx.tokens.size(1), c.data.seq_len);
  EXPECT_EQ(task.tokens_of(batch, c.data.seq_len), c.data.micro_batch * c.data.seq_len);

  task.unload(ctx);
  EXPECT_EQ(ctx.num_items_in_batch, -1);
  EXPECT_FALSE(ctx.documents.packed());
}

TEST(CausalLmTask, RefusesATokenFileTooSmallForOneBatchNamingIt) {
  test::TempDir dir;
  train::TrainConfig c = test::tiny_train_config(dir.path(), DType::f32);
  c.data.seq_len = 400;  // 2 rows of 401 tokens from a file of 600
  const nn::ModelConfig mc = test::tiny_config(nn::Family::llama);
  try {
    train::CausalLmTask().open_data(c.paths.data, c.data, mc, 0, 1, {});
    FAIL() << "expected a ValueError";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find(c.paths.data.string()), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace zt
