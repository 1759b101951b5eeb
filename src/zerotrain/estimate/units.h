// Numbers on the estimate command line and in its output: parameter counts ("2783930000",
// "2851e6", "1.5B"), memory sizes ("80GiB", "80GB", "141", in GiB when bare) and GiB with two
// decimals. Tested by tests/estimate/test_units.cpp.
#pragma once

#include <string>
#include <string_view>

namespace zt::estimate {

inline constexpr double kGiB = 1073741824.0;

// A positive count: a decimal or exponent number with an optional K, M, B or T suffix (10^3..12).
// `what` names the option in the ValueError: "[estimate] --params: expected a positive count ...".
double parse_count(std::string_view text, std::string_view what);
// A positive size in bytes: a number with an optional unit GiB, GB, MiB, MB (bare: GiB).
double parse_size(std::string_view text, std::string_view what);
// "%.2f" of bytes / 2^30.
std::string format_gib(double bytes);

}  // namespace zt::estimate
