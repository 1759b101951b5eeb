// Hand-made parameter lists for the optimizer tests (tests/optim/test_flat_adam.cpp,
// test_flat_optimizer.cpp, test_adam_variants.cpp, test_train_cuda.cpp): named parameters of given
// kinds and dtypes, values uniform in [-1, 1) from consecutive seeds, zero f32 gradients.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "support/test_util.h"
#include "zerotrain/nn/parameter.h"

namespace zt::test {

struct ParamSpec {
  const char* name;
  Shape shape;
  nn::ParamKind kind;
  DType dtype;
};

// Parameter i gets its values from seed + i + 1.
inline std::vector<std::unique_ptr<nn::Parameter>> make_params(std::span<const ParamSpec> specs,
                                                               uint64_t seed,
                                                               Device device = Device::cpu()) {
  std::vector<std::unique_ptr<nn::Parameter>> out;
  for (const ParamSpec& s : specs) {
    auto p = std::make_unique<nn::Parameter>();
    p->name = s.name;
    p->shape = s.shape;
    p->kind = s.kind;
    p->value = random_tensor(s.shape, s.dtype, ++seed, -1.f, 1.f, device);
    p->grad = Tensor::zeros(s.shape, DType::f32, device);
    out.push_back(std::move(p));
  }
  return out;
}

inline std::vector<nn::Parameter*> pointers(const std::vector<std::unique_ptr<nn::Parameter>>& ps) {
  std::vector<nn::Parameter*> out;
  for (const auto& p : ps)
    out.push_back(p.get());
  return out;
}

}  // namespace zt::test
