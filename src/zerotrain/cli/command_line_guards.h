// What CLI11 lets through on its own, guarded before or while it parses: an integer past 64 bits
// (CLI11 clamps --steps 99999999999999999999 to 2^63-1 silently) is refused naming the flag, a
// negative value where none makes sense says so in one short line, and
// an unknown command names the nearest one ("did you mean train?") instead of "A subcommand is
// required". Both are command-line errors: exit 2 (cli/main.cpp). Tested by the cli_refuses_*
// ctests (tests/cli/hostile_inputs.cmake).
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>

namespace zt::cli {

// Adds to every integer option of `app` and its subcommands a check that the text fits its
// 64-bit type, as strtoll/strtoull (CLI11's own conversion) read it, and that an unsigned one has
// no minus sign.
void refuse_integer_overflow(CLI::App& app);

// A check for numeric options that must not be negative (--clip, --plot-every): "must be >= 0,
// got -1" instead of CLI11's range with 300 digits.
CLI::Validator non_negative();

// A check for options that name something (--text-field NAME): an empty name is refused instead
// of reading as "not given".
CLI::Validator non_empty_name();

// The one-line error for `word`, the first argument, when it is neither an option nor one of
// `app`'s commands: "[zerotrain] unknown command "trian" (did you mean train?) ..."; nothing
// when it is fine.
std::optional<std::string> unknown_command(const CLI::App& app, const std::string& word);

}  // namespace zt::cli
