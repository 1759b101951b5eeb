// Where the swapped values of a sub-group lie in the staging buffer; see nvme_value_staging.h.
#include "zerotrain/zero/nvme_value_staging.h"

#include <algorithm>

namespace zt::zero {

ValueStaging stage_values(std::span<const int64_t> run_bytes,
                          std::span<const SubGroup> sub_groups) {
  constexpr int64_t kAlign = 64;
  ValueStaging out;
  out.offset.assign(run_bytes.size(), 0);
  for (const SubGroup& sg : sub_groups) {
    int64_t at = 0;
    for (size_t i = sg.first; i < sg.last; ++i) {
      out.offset[i] = at;
      at += (run_bytes[i] + kAlign - 1) / kAlign * kAlign;
    }
    out.bytes = std::max(out.bytes, at);
  }
  return out;
}

}  // namespace zt::zero
