// Integer range checks on every option and "did you mean" for commands (see
// command_line_guards.h).
#include "zerotrain/cli/command_line_guards.h"

#include <cerrno>
#include <cstdlib>
#include <vector>

#include "zerotrain/config/nearest_name.h"
#include "zerotrain/core/error.h"
#include "zerotrain/core/json_util.h"

namespace zt::cli {

namespace {

// "" when `text` is an integer strto(u)ll reads without ERANGE (or not an integer at all: CLI11
// reports that itself), else the reason. strtoull takes "-1" for 2^64-1 without a word, so a sign
// on an unsigned option (--seed -1) is refused here too.
std::string integer_overflow(const std::string& text, bool is_unsigned) {
  if (const size_t at = text.find_first_not_of(" \t");
      is_unsigned && at != std::string::npos && text[at] == '-')
    return str("must be >= 0, got ", quote_excerpt(text));
  errno = 0;
  char* end = nullptr;
  if (is_unsigned)
    (void)std::strtoull(text.c_str(), &end, 0);
  else
    (void)std::strtoll(text.c_str(), &end, 0);
  if (errno != ERANGE) return "";
  return str(quote_excerpt(text), " does not fit in a 64-bit ",
             is_unsigned ? "unsigned integer" : "integer");
}

}  // namespace

void refuse_integer_overflow(CLI::App& app) {
  for (CLI::Option* opt : app.get_options()) {
    const std::string type = opt->get_type_name();
    const bool is_unsigned = type.rfind("UINT", 0) == 0;
    if (!is_unsigned && type.rfind("INT", 0) != 0) continue;
    opt->check(CLI::Validator(
        [is_unsigned](std::string& text) { return integer_overflow(text, is_unsigned); }, ""));
  }
  for (CLI::App* sub : app.get_subcommands({}))
    refuse_integer_overflow(*sub);
}

CLI::Validator non_negative() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        char* end = nullptr;
        const double v = std::strtod(text.c_str(), &end);
        if (end == text.c_str() || *end != '\0' || v >= 0) return "";  // CLI11 reports non-numbers
        return str("must be >= 0, got ", quote_excerpt(text));
      },
      "");
}

CLI::Validator non_empty_name() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        return text.empty() ? "must be a name, got an empty string" : "";
      },
      "");
}

std::optional<std::string> unknown_command(const CLI::App& app, const std::string& word) {
  if (word.empty() || word[0] == '-') return std::nullopt;
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands({})) {
    if (sub->get_name() == word) return std::nullopt;
    names.push_back(sub->get_name());
  }
  std::string all;
  for (const std::string& n : names)
    all += (all.empty() ? "" : ", ") + n;
  const std::optional<std::string> near = config::nearest_name(word, names);
  return str("[zerotrain] unknown command ", quote_excerpt(word),
             near ? str(" (did you mean ", *near, "?)") : std::string(), "; the commands: ", all,
             " (zerotrain --help)");
}

}  // namespace zt::cli
