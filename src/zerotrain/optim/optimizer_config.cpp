// Names of the update rules; see optimizer_config.h. Tested by tests/optim/test_flat_optimizer.cpp.
#include "zerotrain/optim/optimizer_config.h"

namespace zt::optim {

const char* optimizer_kind_name(OptimizerKind kind) {
  switch (kind) {
    case OptimizerKind::adam:
      return "Adam";
    case OptimizerKind::lamb:
      return "Lamb";
    case OptimizerKind::lion:
      return "Lion";
    case OptimizerKind::sgd:
      return "SGD";
  }
  return "?";
}

}  // namespace zt::optim
