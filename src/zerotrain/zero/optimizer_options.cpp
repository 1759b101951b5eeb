// What decays; see optimizer_options.h.
#include "zerotrain/zero/optimizer_options.h"


namespace zt::zero {

bool decays(const nn::Parameter& p) {
  return p.kind == nn::ParamKind::weight;
}

}  // namespace zt::zero
