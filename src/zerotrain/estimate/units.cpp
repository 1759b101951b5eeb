// Command-line numbers and GiB formatting (see units.h).
#include "zerotrain/estimate/units.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "zerotrain/estimate/checks.h"

namespace zt::estimate {

namespace {

// Splits "12.5GiB" into 12.5 and "GiB"; throws naming `what` when there is no number.
double leading_number(std::string_view text, std::string& rest, std::string_view what,
                      std::string_view expected) {
  const std::string s(text);
  const char* begin = s.c_str();
  char* end = nullptr;
  const double v = std::strtod(begin, &end);
  if (end == begin || s.empty() || std::isspace(static_cast<unsigned char>(s[0])))
    throw ValueError(kComponent, str(what, ": expected ", expected, ", got \"", text, "\""));
  rest = std::string(end);
  if (!(v > 0) || !std::isfinite(v))
    throw ValueError(kComponent, str(what, ": must be > 0, got \"", text, "\""));
  return v;
}

}  // namespace

double parse_count(std::string_view text, std::string_view what) {
  constexpr std::string_view expected = "a positive count like 2783930000, 2851e6 or 1.5B";
  std::string rest;
  double v = leading_number(text, rest, what, expected);
  if (rest == "K" || rest == "k") {
    v *= 1e3;
  } else if (rest == "M") {
    v *= 1e6;
  } else if (rest == "B" || rest == "G") {
    v *= 1e9;
  } else if (rest == "T") {
    v *= 1e12;
  } else if (!rest.empty()) {
    throw ValueError(kComponent, str(what, ": expected ", expected, ", got \"", text, "\""));
  }
  return v;
}

double parse_size(std::string_view text, std::string_view what) {
  constexpr std::string_view expected = "a size like 80GiB, 80GB or 141 (GiB)";
  std::string rest;
  const double v = leading_number(text, rest, what, expected);
  if (rest.empty() || rest == "GiB") return v * kGiB;
  if (rest == "GB") return v * 1e9;
  if (rest == "MiB") return v * 1048576.0;
  if (rest == "MB") return v * 1e6;
  throw ValueError(kComponent, str(what, ": expected ", expected, ", got \"", text, "\""));
}

std::string format_gib(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", bytes / kGiB);
  return buf;
}

}  // namespace zt::estimate
