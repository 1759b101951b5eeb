// Packing host groups into sub-groups; see sub_groups.h.
#include "zerotrain/zero/sub_groups.h"

#include "zerotrain/core/error.h"

namespace zt::zero {

std::vector<SubGroup> split_sub_groups(std::span<const int64_t> numels, int64_t sub_group_size) {
  std::vector<SubGroup> out;
  for (size_t first = 0; first < numels.size();) {
    size_t last = first;
    int64_t n = 0;
    while (last < numels.size() && (last == first || n + numels[last] <= sub_group_size))
      n += numels[last++];
    out.push_back({first, last});
    first = last;
  }
  return out;
}

size_t sub_group_of(std::span<const SubGroup> sub_groups, size_t i) {
  size_t s = 0;
  while (s < sub_groups.size() && i >= sub_groups[s].last)
    ++s;
  ZT_ASSERT(s < sub_groups.size(), "zero", "host group past the last sub-group");
  return s;
}

}  // namespace zt::zero
