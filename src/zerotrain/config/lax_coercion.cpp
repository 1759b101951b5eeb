// lax_bool / lax_int / lax_double (see lax_coercion.h), written to pydantic 2's lax rules for
// Python input: strings are trimmed of whitespace; single underscores may separate digits; an
// integer string may end in ".0..." ("5.000"); a bool string is one of pydantic's twelve
// spellings, in any case.
#include "zerotrain/config/lax_coercion.h"

#include <array>
#include <cctype>
#include <charconv>
#include <string>
#include <string_view>

namespace zt::config {

namespace {

std::string_view trim(std::string_view s) {
  const auto space = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
  while (!s.empty() && space(s.front()))
    s.remove_prefix(1);
  while (!s.empty() && space(s.back()))
    s.remove_suffix(1);
  return s;
}

bool digit(char c) {
  return c >= '0' && c <= '9';
}

// `s` without its underscores, or nullopt when one is not between two digits.
std::optional<std::string> drop_underscores(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '_') {
      out += s[i];
      continue;
    }
    if (i == 0 || i + 1 == s.size() || !digit(s[i - 1]) || !digit(s[i + 1])) return std::nullopt;
  }
  return out;
}

// Drops one leading '+'; false for "+-..." (a sign twice).
bool strip_plus(std::string_view& s) {
  if (s.empty() || s.front() != '+') return true;
  s.remove_prefix(1);
  return s.empty() || s.front() != '-';
}

std::optional<int64_t> int_of_string(std::string_view raw) {
  const std::string_view t = trim(raw);
  // Underscores only in the integer part: "1_0.0" reads as 10, "5.0_0" not at all.
  if (const size_t dot = t.find('.');
      dot != std::string_view::npos && t.find('_', dot) != std::string_view::npos)
    return std::nullopt;
  std::optional<std::string> s = drop_underscores(t);
  if (!s || s->empty()) return std::nullopt;
  // "5.000" reads as 5; "5." and "5.5" do not.
  if (const size_t dot = s->find('.'); dot != std::string::npos) {
    const std::string_view fraction = std::string_view(*s).substr(dot + 1);
    if (fraction.empty() || fraction.find_first_not_of('0') != std::string_view::npos)
      return std::nullopt;
    s->resize(dot);
  }
  std::string_view digits = *s;
  if (!strip_plus(digits)) return std::nullopt;
  int64_t n = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
  if (ec != std::errc() || end != digits.data() + digits.size()) return std::nullopt;
  return n;
}

std::optional<double> double_of_string(std::string_view raw) {
  std::optional<std::string> s = drop_underscores(trim(raw));
  if (!s || s->empty()) return std::nullopt;
  // Decimal digits, a point, an exponent and signs, or the words inf, infinity and nan; never
  // hexadecimal, which from_chars would otherwise read.
  for (char c : *s)
    if (!digit(c) && std::string_view(".+-eEinfatyINFATY").find(c) == std::string_view::npos)
      return std::nullopt;
  std::string_view text = *s;
  if (!strip_plus(text)) return std::nullopt;
  double d = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), d);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return d;
}

}  // namespace

bool validated_leniently(std::string_view key) {
  constexpr std::array<std::string_view, 8> sections = {
      "fp16",  "bf16",  "zero_optimization", "tensorboard", "csv_monitor",
      "wandb", "comet", "comms_logger"};
  for (std::string_view s : sections)
    if (s == key) return true;
  return false;
}

std::optional<bool> lax_bool(const nlohmann::json& v) {
  if (v.is_number_integer() || v.is_number_unsigned()) {
    const int64_t n = v.get<int64_t>();
    if (n == 0 || n == 1) return n == 1;
    return std::nullopt;
  }
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (d == 0.0 || d == 1.0) return d == 1.0;
    return std::nullopt;
  }
  if (!v.is_string()) return std::nullopt;
  std::string s = v.get<std::string>();
  for (char& c : s)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  constexpr std::array<std::string_view, 6> yes = {"1", "on", "t", "true", "y", "yes"};
  constexpr std::array<std::string_view, 6> no = {"0", "off", "f", "false", "n", "no"};
  for (std::string_view w : yes)
    if (s == w) return true;
  for (std::string_view w : no)
    if (s == w) return false;
  return std::nullopt;
}

std::optional<int64_t> lax_int(const nlohmann::json& v) {
  if (v.is_boolean()) return v.get<bool>() ? 1 : 0;
  if (v.is_string()) return int_of_string(v.get<std::string>());
  return std::nullopt;
}

std::optional<double> lax_double(const nlohmann::json& v) {
  if (v.is_boolean()) return v.get<bool>() ? 1.0 : 0.0;
  if (v.is_string()) return double_of_string(v.get<std::string>());
  return std::nullopt;
}

}  // namespace zt::config
