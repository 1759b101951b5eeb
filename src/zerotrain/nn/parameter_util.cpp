// Parameter helpers (see parameter_util.h).
#include "zerotrain/nn/parameter_util.h"

#include <utility>

#include "zerotrain/core/error.h"

namespace zt::nn {

Parameter make_parameter(std::string name, Shape shape, ParamKind kind) {
  Parameter p;
  p.name = std::move(name);
  p.shape = std::move(shape);
  p.kind = kind;
  return p;
}

const Tensor& value_of(const Parameter& p) {
  if (!p.value.defined())
    throw ValueError("nn",
                     str(p.name, ": no value tensor is set (expected ", to_string(p.shape), ")"));
  if (p.value.shape() != p.shape)
    throw ShapeError("nn", str(p.name, ": value ", p.value.describe(), " does not have shape ",
                               to_string(p.shape)));
  return p.value;
}

}  // namespace zt::nn
