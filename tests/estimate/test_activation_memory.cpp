// Activation memory per micro-batch against hand counts of what each layer keeps (the members of
// src/zerotrain/nn/*.h) and the phase rules of [Note: activation phases].
// Covers src/zerotrain/estimate/activation_memory.h.
#include <gtest/gtest.h>

#include "estimate/estimate_fixtures.h"
#include "zerotrain/core/error.h"
#include "zerotrain/estimate/activation_memory.h"

namespace zt::estimate {
namespace {

ActivationOptions opts(int64_t mbs, int64_t seq, int64_t bytes, bool ac) {
  ActivationOptions o;
  o.micro_batch = mbs;
  o.seq = seq;
  o.dtype_bytes = bytes;
  o.checkpointing = ac;
  return o;
}

TEST(ActivationMemory, LlamaLayerKeepsWhatItsMembersSay) {
  // Per token, bf16: x, normed x, h, normed h (4 x 2048), q and out (2 x 2048), k and v
  // (2 x 512), gate and up (2 x 8192); f32: two rstd, 32 lse.
  const double per_token = 2.0 * (4 * 2048 + 2 * 2048 + 2 * 512 + 2 * 8192) + 4 * 2 + 4 * 32;
  const ActivationEstimate e =
      estimate_activations(estimate_config("llama_1b_untied.json"), opts(2, 4096, 2, false));
  EXPECT_EQ(e.tokens, 8192);
  EXPECT_DOUBLE_EQ(e.layer_saved, per_token * 8192);
  EXPECT_DOUBLE_EQ(e.layer_input, 2.0 * 2048 * 8192);
  // The [N, V] logits dominate the head: the peak is at the head, with every layer's activations.
  EXPECT_EQ(e.phase, "head");
  EXPECT_GT(e.head, 2.0 * 128256 * 8192);
  EXPECT_DOUBLE_EQ(e.peak, e.token_inputs + 16 * e.layer_saved + e.head);
}

TEST(ActivationMemory, Gpt2LayerKeepsWhatItsMembersSay) {
  // f32: x, normed x, h, normed h, fused q|k|v (3 x 768), out, GELU pre-activation (3072); two
  // LayerNorms' mean and rstd; 12 lse.
  const double per_token = 4.0 * (4 * 768 + 3 * 768 + 768 + 3072) + 2 * 8 + 4 * 12;
  const ActivationEstimate e =
      estimate_activations(estimate_config("gpt2.json"), opts(4, 1024, 4, false));
  EXPECT_DOUBLE_EQ(e.layer_saved, per_token * 4096);
}

TEST(ActivationMemory, CheckpointingKeepsLayerInputs) {
  const nn::ModelConfig c = estimate_config("llama_1b_untied.json");
  const ActivationEstimate full = estimate_activations(c, opts(2, 4096, 2, false));
  const ActivationEstimate ac = estimate_activations(c, opts(2, 4096, 2, true));
  EXPECT_LT(ac.peak, full.peak);
  EXPECT_DOUBLE_EQ(ac.head_phase, ac.token_inputs + 16 * ac.layer_input + ac.head);
  EXPECT_DOUBLE_EQ(ac.layer_phase,
                   ac.token_inputs + 15 * ac.layer_input + ac.layer_saved + ac.layer_backward_temp);
}

TEST(ActivationMemory, ScalesWithTokens) {
  const nn::ModelConfig c = estimate_config("llama3_8b.json");
  for (bool ac : {false, true}) {
    const double one = estimate_activations(c, opts(1, 2048, 2, ac)).peak;
    EXPECT_DOUBLE_EQ(estimate_activations(c, opts(2, 2048, 2, ac)).peak, 2 * one);
    EXPECT_DOUBLE_EQ(estimate_activations(c, opts(1, 4096, 2, ac)).peak, 2 * one);
  }
}

TEST(ActivationMemory, BadInputs) {
  const nn::ModelConfig c = estimate_config("gpt2.json");
  EXPECT_THROW(estimate_activations(c, opts(0, 1024, 2, false)), ValueError);
  EXPECT_THROW(estimate_activations(c, opts(1, -1, 2, false)), ValueError);
  EXPECT_THROW(estimate_activations(c, opts(1, 1024, 3, false)), ValueError);
  try {  // the token count used to wrap
    estimate_activations(c, opts(int64_t(1) << 62, 1024, 2, false));
    ADD_FAILURE() << "accepted";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("x seq 1024: more than 2^63 tokens"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace zt::estimate
