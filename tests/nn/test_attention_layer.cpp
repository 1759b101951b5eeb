// Attention sublayers: llama-family SelfAttention (grouped-query heads, RoPE with and without
// Llama-3 scaling, q/k/v(/o) biases, sliding window) and GPT-2's fused Conv1D attention. Gradients
// of the input and every parameter against finite differences; the forward math is checked against
// the float64 reference model in test_transformer_model.cpp.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "nn/nn_test_util.h"
#include "support/test_util.h"
#include "zerotrain/nn/architecture.h"
#include "zerotrain/nn/gpt2_attention.h"
#include "zerotrain/nn/self_attention.h"

namespace zt {
namespace {

using nn::Family;

void check(nn::Sublayer& layer, const nn::ModelConfig& c, const std::string& what) {
  std::vector<nn::Parameter*> params;
  layer.append_parameters(params);
  test::allocate(params, DType::f32, DType::f32);
  test::randomize(params, 3, 0.4f);
  const nn::TokenDims dims{2, 6, {}};
  test::LayerProbe probe{[&](const Tensor& x) { return layer.forward(x, dims, {}); },
                         [&](const Tensor& dy) { return layer.backward(dy, {}); }, params};
  test::expect_layer_gradients_match_fd(
      probe, test::random_tensor({dims.tokens(), c.hidden_size}, DType::f32, 4), 17, what);
}

TEST(NnAttentionLayer, SelfAttentionGradients) {
  struct Variant {
    std::string name;
    Family family;
    bool bias;
  };
  for (const Variant& v : {Variant{"llama3 rope, GQA", Family::llama, false},
                           Variant{"llama with attention_bias", Family::llama, true},
                           Variant{"mistral window 3", Family::mistral, false},
                           Variant{"qwen2 qkv bias", Family::qwen2, false}}) {
    nn::ModelConfig c = test::tiny_config(v.family);
    c.attention_bias = v.bias;
    nn::SelfAttention attn("model.layers.0.self_attn", c, nn::architecture_of(c));
    EXPECT_EQ(attn.q_proj.has_bias(), v.bias || v.family == Family::qwen2) << v.name;
    EXPECT_EQ(attn.o_proj.has_bias(), v.bias) << v.name;
    check(attn, c, v.name);
  }
}

TEST(NnAttentionLayer, Gpt2AttentionGradients) {
  const nn::ModelConfig c = test::tiny_config(Family::gpt2);
  nn::Gpt2Attention attn("transformer.h.0.attn", c);
  EXPECT_EQ(attn.c_attn.weight.shape, (Shape{32, 96}));
  check(attn, c, "gpt2 attention");
}

TEST(NnAttentionLayer, GroupedQueryEqualsRepeatedKvHeads) {
  // With k/v projections whose kv heads are duplicated, GQA (2 kv heads) equals full attention
  // (4 heads) where head h reads kv head h / 2: Hugging Face's repeat_kv.
  nn::ModelConfig gqa = test::tiny_config(Family::qwen2), full = gqa;
  full.num_kv_heads = 4;
  nn::SelfAttention a("a", gqa, nn::architecture_of(gqa)), b("b", full, nn::architecture_of(full));
  std::vector<nn::Parameter*> pa, pb;
  a.append_parameters(pa);
  b.append_parameters(pb);
  test::allocate(pa, DType::f32, DType::f32);
  test::allocate(pb, DType::f32, DType::f32);
  test::randomize(pa, 5);
  const int64_t D = gqa.head_dim, C = gqa.hidden_size;
  for (size_t i = 0; i < pa.size(); ++i) {
    const auto v = pa[i]->value.to_floats();
    std::vector<float> w;
    const bool kv = pa[i]->name.find("k_proj") != std::string::npos ||
                    pa[i]->name.find("v_proj") != std::string::npos;
    if (!kv) {
      w = v;
    } else {
      const int64_t row = pa[i]->shape.size() == 2 ? C : 1;  // weight rows [D*C] or bias [D]
      for (int64_t h = 0; h < 4; ++h)
        w.insert(w.end(), v.begin() + (h / 2) * D * row, v.begin() + (h / 2 + 1) * D * row);
    }
    pb[i]->value.copy_from(Tensor::from_floats(w, pb[i]->shape, DType::f32));
  }
  const Tensor x = test::random_tensor({12, C}, DType::f32, 6);
  test::expect_close(test::to_doubles(b.forward(x, {2, 6, {}}, {})), a.forward(x, {2, 6, {}}, {}),
                     {1e-6, 1e-5}, "GQA vs repeated kv heads");
}

}  // namespace
}  // namespace zt
