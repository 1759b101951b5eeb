// One named parameter of a model: its Hugging Face name, shape, role, value and gradient buffers.
// The owner of the storage (the model in one process, the ZeRO engine later) points `value` and
// `grad` at its buffers before a block runs; layers never allocate parameter memory themselves.
#pragma once

#include <string>

#include "zerotrain/core/tensor.h"

namespace zt::nn {

// What a parameter is, for optimizer grouping (by default no weight decay on norms, biases and
// embeddings, as the HF Trainer does) and for initialization.
enum class ParamKind { weight, bias, norm, embedding };

struct Parameter {
  std::string name;  // "model.layers.0.self_attn.q_proj.weight"
  Shape shape;
  ParamKind kind = ParamKind::weight;
  Tensor value;  // [shape], the compute dtype
  Tensor grad;   // [shape], f32 or the compute dtype; backward ADDS into it (the owner zeroes it)
};

}  // namespace zt::nn
