// The one table of the zero_optimization section: a row per key DeepSpeed 0.19.6 accepts there
// (offload_param's and offload_optimizer's included), in the order the parser reads them. A row
// names the key as `zerotrain config check` prints it, the field it fills (whose type is the
// key's), its bounds, how zerotrain uses it, and zerotrain train's flag with its help text. It
// drives the parse of the section (parse_zero.cpp), its printing (to_json.cpp), its rows of
// `config check --explain` (key_usage.cpp), train's and config check's ZeRO flags and the
// flag/file agreement (resolve_auto.cpp). Defaults are the fields' initializers (ds_config.h;
// the numeric ones from zero_keys.h's rows), so a key's default is written once. Tested by
// tests/config/test_zero_key_table.cpp and through its users by tests/config/ (the ds_config
// corpus, key usage, "auto" resolution).
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

#include "zerotrain/config/ds_config.h"
#include "zerotrain/config/overrides.h"

namespace zt::config {

// The field a key fills: a setting of the section (bool, the stage's int, an int64), a nested
// offload section, or one of an offload section's settings (device, path, bool, int64, ratio).
using ZeroField = std::variant<
    bool ZeroConfig::*, int ZeroConfig::*, int64_t ZeroConfig::*,
    std::optional<OffloadParamConfig> ZeroConfig::*,
    std::optional<OffloadOptimizerConfig> ZeroConfig::*, OffloadDevice OffloadParamConfig::*,
    std::optional<std::string> OffloadParamConfig::*, int64_t OffloadParamConfig::*,
    bool OffloadParamConfig::*, OffloadDevice OffloadOptimizerConfig::*,
    std::optional<std::string> OffloadOptimizerConfig::*, int64_t OffloadOptimizerConfig::*,
    bool OffloadOptimizerConfig::*, double OffloadOptimizerConfig::*>;

// The struct a pointer to member belongs to.
template <typename M>
struct ZeroMember;
template <typename S, typename T>
struct ZeroMember<T S::*> {
  using Struct = S;
};

struct ZeroKey {
  // Under zero_optimization, as `config check` prints it: "stage", "offload_param.buffer_count";
  // a stage3_ key is also read under its name without the prefix (DeepSpeed's alias).
  std::string_view path = {};
  ZeroField field = {};
  int64_t min = std::numeric_limits<int64_t>::min();     // an integer's least value
  double lo = -std::numeric_limits<double>::infinity();  // a real's range
  double hi = std::numeric_limits<double>::infinity();
  bool on_at_stage3 = false;  // a bool whose default is DeepSpeed's "stage == 3" (overlap_comm)
  // How zerotrain uses it (`config check --explain`); for a section, every key under it that has
  // no text of its own.
  std::string_view usage = {};
  // Read nowhere, yet a value other than the default changes what DeepSpeed does: warned.
  bool warn_when_set = false;
  std::string_view flag = {};  // zerotrain train's flag, or ""
  std::string_view help = {};  // the flag's --help text
  // "auto" from the model's hidden size, as the Hugging Face Trainer fills it (resolve_auto.h), at
  // stage 3 only when hidden_auto_stage3; nullptr: no trainer fills it.
  int64_t (*hidden_auto)(int64_t hidden) = nullptr;
  bool hidden_auto_stage3 = false;
  // Where train_overrides puts the flag's value, when the file's key must agree with it.
  std::optional<int64_t> ConfigOverrides::*given = nullptr;
  bool config_check_flag = false;  // `config check` takes the flag too
};

// Every row, in the parser's order.
const std::vector<ZeroKey>& zero_key_table();

// The row of `path` (as printed; "offload_param.device"). Throws std::logic_error for a path the
// table lacks (a programming error).
const ZeroKey& zero_key(std::string_view path);

// The section part of a row's path ("" or "offload_param") and its last part ("buffer_count").
std::string_view zero_key_section(const ZeroKey& k);
std::string_view zero_key_name(const ZeroKey& k);
// Whether the row is a nested section (offload_param, offload_optimizer) holding the rows under it.
bool zero_key_is_section(const ZeroKey& k);
// The other spelling a stage3_ key is read under ("prefetch_bucket_size"), or "".
std::string_view zero_key_alias(const ZeroKey& k);

// The flags whose values a file's zero_optimization must agree with (and which fill its missing
// keys), in the order they are checked: the first disagreement is the one named.
std::vector<const ZeroKey*> zero_flag_keys();

// Calls f(row, member) for each row of `section` ("" for zero_optimization itself,
// "offload_param", "offload_optimizer") whose field is a member of S, in the table's order.
template <typename S, typename F>
void for_each_zero_key(std::string_view section, F&& f) {
  for (const ZeroKey& k : zero_key_table()) {
    if (zero_key_section(k) != section) continue;
    std::visit(
        [&](auto member) {
          if constexpr (std::is_same_v<typename ZeroMember<decltype(member)>::Struct, S>)
            f(k, member);
        },
        k.field);
  }
}

// The row of `path` under either spelling of a stage-3 key, or nullptr.
const ZeroKey* find_zero_key(std::string_view path);

// How zerotrain uses zero_optimization.<path> (either spelling of a stage-3 key; any key under an
// offload section), or nullopt when the table has no row for it.
std::optional<std::string_view> zero_key_usage(std::string_view path);
// `path` with a stage-3 key under its printed stage3_ name.
std::string zero_key_printed_path(std::string_view path);

}  // namespace zt::config
