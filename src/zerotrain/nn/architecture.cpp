// architecture_of: asks the family (see architecture.h).
#include "zerotrain/nn/architecture.h"

#include "zerotrain/nn/family_registry.h"

namespace zt::nn {

Architecture architecture_of(const ModelConfig& c) {
  return family_traits(c.family).architecture(c);
}

}  // namespace zt::nn
