// Small helpers the layers share for their Parameters: construction, checked access to the value
// (the owner points it at storage before a block runs), and whether a gradient is wanted.
#pragma once

#include <string>
#include <vector>

#include "zerotrain/nn/parameter.h"

namespace zt::nn {

Parameter make_parameter(std::string name, Shape shape, ParamKind kind);

// p.value, checked to be defined with p.shape; throws ValueError naming the parameter otherwise.
const Tensor& value_of(const Parameter& p);

// A parameter without a grad buffer is frozen: backward skips its gradient.
inline bool wants_grad(const Parameter& p) {
  return p.grad.defined();
}

}  // namespace zt::nn
