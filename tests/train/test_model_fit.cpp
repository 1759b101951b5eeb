// A run no machine of this size can hold is refused before anything is built, naming the
// config.json key that scales the model's largest part or the batch whose activations do not fit
// (train/model_fit.h), and a small one passes.
#include <gtest/gtest.h>

#include <string>

#include "io/io_test_util.h"
#include "nn/nn_test_util.h"
#include "zerotrain/core/error.h"
#include "zerotrain/train/model_fit.h"

namespace zt {
namespace {

// 16384 layers of a 16384-wide llama: 5.3e13 parameters (under the config ceiling of 2^47), about
// 200 TB of f32, more than any one machine.
nn::ModelConfig huge_llama() {
  nn::ModelConfig c = test::tiny_config(nn::Family::llama);
  c.hidden_size = 16384;
  c.num_heads = 128;
  c.num_kv_heads = 128;
  c.head_dim = 128;
  c.intermediate_size = 53248;
  c.num_layers = 16384;
  return c;
}

TEST(ModelFit, ParametersBeyondTheMachineAreRefusedByKey) {
  train::TrainConfig c;
  test::expect_error<ValueError>([&] { train::check_model_fits_machine(c, huge_llama(), 1); },
                                 {"[train] num_hidden_layers: the model has ", " parameters, ",
                                  "of f32 values per rank, more than this machine's memory ("});
  c.zero.stage = 3;
  test::expect_error<ValueError>([&] { train::check_model_fits_machine(c, huge_llama(), 4); },
                                 {"(1/4 at ZeRO stage 3)"});
}

TEST(ModelFit, ActivationsBeyondTheMachineNameTheBatch) {
  train::TrainConfig c;
  c.data.micro_batch = int64_t(1) << 40;
  c.data.seq_len = 16;
  test::expect_error<ValueError>(
      [&] { train::check_model_fits_machine(c, test::tiny_config(nn::Family::llama), 1); },
      {"[train] --micro-batch 1099511627776 x --seq-len 16: one micro-batch's activations need "
       "about ",
       "more than this machine's memory"});
  c.data.micro_batch = int64_t(1) << 62;
  test::expect_error<ValueError>(
      [&] { train::check_model_fits_machine(c, test::tiny_config(nn::Family::llama), 1); },
      {"tokens do not fit in 64 bits"});
}

TEST(ModelFit, ASmallModelPasses) {
  train::TrainConfig c;
  EXPECT_NO_THROW(train::check_model_fits_machine(c, test::tiny_config(nn::Family::gpt2), 1));
}

}  // namespace
}  // namespace zt
