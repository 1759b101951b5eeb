// ModelConfig: family names, shape validation and parameter counts (checked sizes and the
// formulas in model_size.cpp). Tested by tests/nn/test_model_config.cpp.
#include "zerotrain/nn/model_config.h"

#include <cmath>

#include "zerotrain/core/error.h"
#include "zerotrain/nn/architecture.h"
#include "zerotrain/nn/family_registry.h"
#include "zerotrain/nn/model_size.h"

namespace zt::nn {

namespace {

constexpr const char* kComponent = "model_config";

void require(bool ok, const char* field, const std::string& why) {
  if (!ok) throw ValueError(kComponent, str(field, ": ", why));
}

void require_positive(int64_t v, const char* field) {
  require(v > 0, field, str("must be > 0, got ", v));
}

}  // namespace

std::string family_name(Family f) {
  return family_traits(f).name;
}

void ModelConfig::validate() const {
  const Architecture a = architecture_of(*this);
  require_positive(vocab_size, "vocab_size");
  require_positive(hidden_size, "hidden_size");
  require_positive(intermediate_size, "intermediate_size");
  require_positive(num_layers, "num_layers");
  require_positive(num_heads, "num_heads");
  require_positive(num_kv_heads, "num_kv_heads");
  require(head_dim > 0, "head_dim",
          str("must be > 0 (hidden_size / num_heads unless the config sets it), got ", head_dim));
  require(num_heads % num_kv_heads == 0, "num_kv_heads",
          str(num_kv_heads, " does not divide num_heads ", num_heads));
  require(norm_eps > 0 && std::isfinite(norm_eps), "norm_eps",
          str("must be finite and > 0, got ", norm_eps));
  require(sliding_window >= 0, "sliding_window", str("must be >= 0, got ", sliding_window));
  if (a.mlp == MlpKind::swiglu) {
    require(hidden_act == "silu", "hidden_act",
            str("the ", family_name(family), " MLP supports \"silu\", got \"", hidden_act, "\""));
  } else {
    require(hidden_act == "gelu_new" || hidden_act == "gelu_pytorch_tanh", "hidden_act",
            str("the ", family_name(family),
                " MLP supports \"gelu_new\" and \"gelu_pytorch_tanh\", got \"", hidden_act, "\""));
  }
  if (a.attention == AttentionKind::gpt2) {
    require(
        num_kv_heads == num_heads, "num_kv_heads",
        str("gpt2 has no grouped-query attention: ", num_kv_heads, " != num_heads ", num_heads));
    require(head_dim * num_heads == hidden_size, "head_dim",
            str(head_dim, " * num_heads ", num_heads, " != hidden_size ", hidden_size));
  }
  if (a.learned_positions) require_positive(max_position_embeddings, "max_position_embeddings");
  if (const std::optional<SizeProblem> p = find_size_problem(*this))
    throw ValueError(kComponent, str(p->field, ": ", p->message));
  if (a.rotary) {
    require(head_dim % 2 == 0, "head_dim", str("RoPE needs an even head_dim, got ", head_dim));
    require(rope_theta > 0 && std::isfinite(rope_theta), "rope_theta",
            str("must be finite and > 0, got ", rope_theta));
    const RopeScaling& s = rope_scaling;
    if (s.factor != 0) {
      require(s.factor > 0 && std::isfinite(s.factor), "rope_scaling.factor",
              str("must be finite and > 0, got ", s.factor));
      require(s.low_freq_factor > 0, "rope_scaling.low_freq_factor",
              str("must be > 0, got ", s.low_freq_factor));
      require(s.high_freq_factor > s.low_freq_factor, "rope_scaling.high_freq_factor",
              str(s.high_freq_factor, " must exceed low_freq_factor ", s.low_freq_factor));
      require(s.original_max_position_embeddings > 0,
              "rope_scaling.original_max_position_embeddings",
              str("must be > 0, got ", s.original_max_position_embeddings));
    }
  }
}

int64_t ModelConfig::num_params() const {
  return model_size(*this).params;
}

int64_t ModelConfig::num_non_embedding_params() const {
  const ModelSize s = model_size(*this);
  return s.params - s.embedding_params;
}

}  // namespace zt::nn
