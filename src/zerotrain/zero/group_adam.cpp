// What decays; see group_adam.h.
#include "zerotrain/zero/group_adam.h"


namespace zt::zero {

bool decays(const nn::Parameter& p) {
  return p.kind == nn::ParamKind::weight;
}

}  // namespace zt::zero
