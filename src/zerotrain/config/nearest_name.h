// The valid name closest to a misspelt one (Levenshtein distance), for "did you mean" hints in
// config errors. Tested by tests/config/test_nearest_name.cpp.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace zt::config {

// Insertions, deletions and substitutions (each costs 1) turning `a` into `b`, case-sensitive.
size_t edit_distance(std::string_view a, std::string_view b);

// The candidate nearest to `name` when it is close enough to be a plausible typo: at most
// max(2, |name| / 3) edits, or equal ignoring case. Ties go to the earlier candidate.
std::optional<std::string> nearest_name(std::string_view name,
                                        const std::vector<std::string>& candidates);

}  // namespace zt::config
