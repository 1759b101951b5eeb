// Activation memory of one micro-batch (see activation_memory.h, [Note: activation phases]).
#include "zerotrain/estimate/activation_memory.h"

#include <algorithm>

#include "zerotrain/core/checked_math.h"
#include "zerotrain/estimate/checks.h"
#include "zerotrain/nn/architecture.h"

namespace zt::estimate {

namespace {

struct PerToken {
  double saved = 0;          // bytes one layer keeps per token
  double backward_temp = 0;  // its backward's extra bytes per token
  double head = 0;           // the head's bytes per token
};

PerToken per_token(const nn::ModelConfig& c, double b) {
  const nn::Architecture a = nn::architecture_of(c);
  const double C = static_cast<double>(c.hidden_size), I = static_cast<double>(c.intermediate_size);
  const double q = static_cast<double>(c.num_heads * c.head_dim);
  const double kv = static_cast<double>(c.num_kv_heads * c.head_dim);
  const double hq = static_cast<double>(c.num_heads);
  const double V = static_cast<double>(c.vocab_size);
  const double norm_stats = a.layer_norm ? 8 : 4;  // f32 mean + rstd, or rstd
  const double mlp_saved = a.mlp == nn::MlpKind::swiglu ? 2 * I : I;
  PerToken t;
  // x, normed x, q, k, v, attention out, h, normed h, MLP; two norms' statistics; lse.
  t.saved = b * (4 * C + 2 * q + 2 * kv + mlp_saved) + 2 * norm_stats + 4 * hq;
  // MLP backward: dy + (dh, dgate, dup) or (dact, act); attention backward: dy + dh + (dout, dq,
  // dk, dv) or gpt2's (dparts [3C], its contiguous copy) + the f32 D rows.
  const double mlp_temp = C + (a.mlp == nn::MlpKind::swiglu ? 3 * I : 2 * I);
  const double attn_temp =
      2 * C + (a.attention == nn::AttentionKind::gpt2 ? 6 * C : 2 * q + 2 * kv);
  t.backward_temp = b * std::max(mlp_temp, attn_temp) + 4 * hq;
  // Last layer's output (the norm's input), normed, logits -> dlogits, statistics; in backward
  // dnormed and the norm's dx (the forward's f32 per-token losses are smaller).
  t.head = b * (2 * C + V) + norm_stats + std::max(2 * b * C, 4.0);
  return t;
}

}  // namespace

ActivationEstimate estimate_activations(const nn::ModelConfig& c, const ActivationOptions& o) {
  require_positive(o.micro_batch, "micro_batch");
  require_positive(o.seq, "seq");
  if (o.dtype_bytes != 2 && o.dtype_bytes != 4)
    throw ValueError(kComponent,
                     str("dtype_bytes: must be 2 (bf16) or 4 (f32), got ", o.dtype_bytes));
  const std::optional<int64_t> tokens = checked_mul(o.micro_batch, o.seq);
  if (!tokens)
    throw ValueError(kComponent, str("micro_batch ", o.micro_batch, " x seq ", o.seq,
                                     ": more than 2^63 tokens"));
  c.validate();
  const double b = static_cast<double>(o.dtype_bytes);
  const PerToken t = per_token(c, b);
  const double n = static_cast<double>(*tokens);
  const double layers = static_cast<double>(c.num_layers);

  ActivationEstimate e;
  e.tokens = *tokens;
  e.layer_saved = t.saved * n;
  e.layer_input = b * static_cast<double>(c.hidden_size) * n;
  e.layer_backward_temp = t.backward_temp * n;
  e.head = t.head * n;
  e.token_inputs = 8 * n;
  const double held_forward = o.checkpointing ? layers * e.layer_input : layers * e.layer_saved;
  const double held_backward =
      o.checkpointing ? (layers - 1) * e.layer_input + e.layer_saved : layers * e.layer_saved;
  e.head_phase = e.token_inputs + held_forward + e.head;
  e.layer_phase = e.token_inputs + held_backward + e.layer_backward_temp;
  e.peak = std::max(e.head_phase, e.layer_phase);
  e.phase = e.head_phase >= e.layer_phase ? "head" : "layer backward";
  return e;
}

}  // namespace zt::estimate
