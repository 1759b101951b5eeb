// NVTX behind core/profile_range.h. NVTX 3 is header-only: the first call looks for a profiler's
// injection library and, with none, turns every later call into a return.
#include "zerotrain/core/profile_range.h"

#include <nvtx3/nvToolsExt.h>

namespace zt {

void profile_range_push(const char* name) {
  nvtxRangePushA(name);
}

void profile_range_pop() {
  nvtxRangePop();
}

}  // namespace zt
