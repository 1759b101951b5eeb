// The fake model of the hf_model tests (see fake_model.h).
#include "io/fake_model.h"

#include <stdexcept>

#include "support/test_util.h"

namespace zt::test {

namespace {
using nn::ParamKind;

void add(std::vector<nn::Parameter>& ps, const std::string& name, Shape shape, ParamKind kind) {
  nn::Parameter p;
  p.name = name;
  p.shape = std::move(shape);
  p.kind = kind;
  ps.push_back(std::move(p));
}

std::vector<nn::Parameter> llama_like(const nn::ModelConfig& c, bool list_tied_head) {
  std::vector<nn::Parameter> ps;
  const int64_t C = c.hidden_size, q = c.num_heads * c.head_dim, kv = c.num_kv_heads * c.head_dim;
  add(ps, "model.embed_tokens.weight", {c.vocab_size, C}, ParamKind::embedding);
  for (int64_t l = 0; l < c.num_layers; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    add(ps, p + "input_layernorm.weight", {C}, ParamKind::norm);
    add(ps, p + "self_attn.q_proj.weight", {q, C}, ParamKind::weight);
    add(ps, p + "self_attn.k_proj.weight", {kv, C}, ParamKind::weight);
    add(ps, p + "self_attn.v_proj.weight", {kv, C}, ParamKind::weight);
    if (c.attention_bias) {
      add(ps, p + "self_attn.q_proj.bias", {q}, ParamKind::bias);
      add(ps, p + "self_attn.k_proj.bias", {kv}, ParamKind::bias);
      add(ps, p + "self_attn.v_proj.bias", {kv}, ParamKind::bias);
    }
    add(ps, p + "self_attn.o_proj.weight", {C, q}, ParamKind::weight);
    add(ps, p + "post_attention_layernorm.weight", {C}, ParamKind::norm);
    add(ps, p + "mlp.gate_proj.weight", {c.intermediate_size, C}, ParamKind::weight);
    add(ps, p + "mlp.up_proj.weight", {c.intermediate_size, C}, ParamKind::weight);
    add(ps, p + "mlp.down_proj.weight", {C, c.intermediate_size}, ParamKind::weight);
  }
  add(ps, "model.norm.weight", {C}, ParamKind::norm);
  if (!c.tie_word_embeddings || list_tied_head)
    add(ps, "lm_head.weight", {c.vocab_size, C}, ParamKind::weight);
  return ps;
}

std::vector<nn::Parameter> gpt2(const nn::ModelConfig& c, bool list_tied_head) {
  std::vector<nn::Parameter> ps;
  const int64_t C = c.hidden_size, I = c.intermediate_size;
  add(ps, "transformer.wte.weight", {c.vocab_size, C}, ParamKind::embedding);
  add(ps, "transformer.wpe.weight", {c.max_position_embeddings, C}, ParamKind::embedding);
  for (int64_t l = 0; l < c.num_layers; ++l) {
    const std::string p = "transformer.h." + std::to_string(l) + ".";
    add(ps, p + "ln_1.weight", {C}, ParamKind::norm);
    add(ps, p + "ln_1.bias", {C}, ParamKind::norm);
    add(ps, p + "attn.c_attn.weight", {C, 3 * C}, ParamKind::weight);
    add(ps, p + "attn.c_attn.bias", {3 * C}, ParamKind::bias);
    add(ps, p + "attn.c_proj.weight", {C, C}, ParamKind::weight);
    add(ps, p + "attn.c_proj.bias", {C}, ParamKind::bias);
    add(ps, p + "ln_2.weight", {C}, ParamKind::norm);
    add(ps, p + "ln_2.bias", {C}, ParamKind::norm);
    add(ps, p + "mlp.c_fc.weight", {C, I}, ParamKind::weight);
    add(ps, p + "mlp.c_fc.bias", {I}, ParamKind::bias);
    add(ps, p + "mlp.c_proj.weight", {I, C}, ParamKind::weight);
    add(ps, p + "mlp.c_proj.bias", {C}, ParamKind::bias);
  }
  add(ps, "transformer.ln_f.weight", {C}, ParamKind::norm);
  add(ps, "transformer.ln_f.bias", {C}, ParamKind::norm);
  if (!c.tie_word_embeddings || list_tied_head)
    add(ps, "lm_head.weight", {c.vocab_size, C}, ParamKind::weight);
  return ps;
}
}  // namespace

std::vector<nn::Parameter*> FakeModel::pointers() {
  std::vector<nn::Parameter*> out;
  for (nn::Parameter& p : params)
    out.push_back(&p);
  return out;
}

nn::Parameter& FakeModel::at(const std::string& name) {
  for (nn::Parameter& p : params)
    if (p.name == name) return p;
  throw std::out_of_range("no parameter " + name);
}

FakeModel make_fake_model(const nn::ModelConfig& config, DType dtype, uint64_t seed, bool zeros,
                          bool list_tied_head) {
  FakeModel m;
  m.config = config;
  m.params = config.family == nn::Family::gpt2 ? gpt2(config, list_tied_head)
                                               : llama_like(config, list_tied_head);
  for (nn::Parameter& p : m.params)
    p.value = zeros ? Tensor::zeros(p.shape, dtype) : random_tensor(p.shape, dtype, seed++);
  return m;
}

nn::ModelConfig tiny_llama() {
  nn::ModelConfig c;
  c.family = nn::Family::llama;
  c.vocab_size = 32;
  c.hidden_size = 16;
  c.intermediate_size = 24;
  c.num_layers = 2;
  c.num_heads = 4;
  c.num_kv_heads = 2;
  c.head_dim = 4;
  c.max_position_embeddings = 64;
  c.norm_eps = 1e-5;
  c.rope_theta = 500000;
  c.bos_token_id = 1;
  c.eos_token_id = 2;
  return c;
}

nn::ModelConfig tiny_qwen2() {
  nn::ModelConfig c = tiny_llama();
  c.family = nn::Family::qwen2;
  c.attention_bias = true;
  c.tie_word_embeddings = true;
  c.norm_eps = 1e-6;
  return c;
}

nn::ModelConfig tiny_gpt2() {
  nn::ModelConfig c;
  c.family = nn::Family::gpt2;
  c.vocab_size = 20;
  c.hidden_size = 8;
  c.intermediate_size = 32;
  c.num_layers = 2;
  c.num_heads = 2;
  c.num_kv_heads = 2;
  c.head_dim = 4;
  c.max_position_embeddings = 16;
  c.norm_eps = 1e-5;
  c.hidden_act = "gelu_new";
  c.tie_word_embeddings = true;
  c.attention_bias = true;
  c.mlp_bias = true;
  c.bos_token_id = 19;
  c.eos_token_id = 19;
  return c;
}

}  // namespace zt::test
