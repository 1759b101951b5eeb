// Activation memory of one micro-batch in zerotrain, from what each layer keeps (the shape/dtype
// comments on the members of nn/*.h) and what its backward allocates, in two phases whose larger
// one is the peak. See [Note: activation phases]. Tested by
// tests/estimate/test_activation_memory.cpp and, through the peak, by the measured calibration rows
// of tests/estimate/test_peak_estimate.cpp.
#pragma once

#include <cstdint>
#include <string>

#include "zerotrain/nn/model_config.h"

namespace zt::estimate {

// [Note: activation phases]
// Per token, a decoder layer keeps (compute dtype unless noted): its input (norm1), the normed
// input (attention), q, k, v after RoPE and the attention output, the log-sum-exp (f32, one per
// query head), h = x + attn (norm2), the normed h (MLP), and gate + up (SwiGLU) or the GELU
// pre-activation; RMSNorm keeps rstd (f32), LayerNorm mean and rstd. The head keeps the last
// layer's output, the normed output and the [N, V] logits, which the fused loss turns into their
// gradient in place ([Note: fused loss] in nn/head_block.h), then backward adds dnormed and dx.
// With activation checkpointing a layer keeps only its input until its backward recomputes it
// ([Note: activation checkpointing] in nn/block_runner.h).
//   head phase: every layer's saved activations (or inputs) + the head with its backward buffers.
//   layer phase: the last layer's backward, after the head has freed its logits: every layer's
//     saved activations (or the inputs plus one recomputed layer) + the backward temporaries
//     (incoming gradient, dh/dgate/dup or dq/dk/dv/dout, the attention's f32 D rows).
// The token ids and targets (i32) are held throughout.

struct ActivationOptions {
  int64_t micro_batch = 1;
  int64_t seq = 0;
  int64_t dtype_bytes = 2;  // the compute dtype: 2 for bf16, 4 for f32
  bool checkpointing = false;
};

struct ActivationEstimate {
  int64_t tokens = 0;              // micro_batch * seq
  double layer_saved = 0;          // bytes one decoder layer keeps between forward and backward
  double layer_input = 0;          // bytes of one layer input (what checkpointing keeps)
  double layer_backward_temp = 0;  // extra bytes at the worst point of a layer's backward
  double head = 0;                 // the head's saved activations and backward buffers
  double token_inputs = 0;         // ids and targets
  double head_phase = 0;           // totals of the two phases
  double layer_phase = 0;
  double peak = 0;    // max of the two phases
  std::string phase;  // "head" or "layer backward"
};

// Throws ValueError naming a non-positive micro_batch / seq or a dtype size other than 2 or 4.
ActivationEstimate estimate_activations(const nn::ModelConfig& config,
                                        const ActivationOptions& options);

}  // namespace zt::estimate
