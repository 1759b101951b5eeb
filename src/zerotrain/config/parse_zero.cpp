// zero_optimization with offload_param and offload_optimizer (DeepSpeed's zero/config.py and
// zero/offload_config.py): every row of zero_key_table.h read in its order, into its field, with
// its bounds; a stage-3 key under either spelling.
#include <string>
#include <type_traits>

#include "zerotrain/config/parse_sections.h"
#include "zerotrain/config/zero_key_table.h"
#include "zerotrain/core/error.h"

namespace zt::config {

namespace {

const std::vector<std::string> kDevices = {"none", "cpu", "nvme"};

template <typename S>
void read_keys(Section& s, S& out, std::string_view section);

// The key's name in the file: a stage-3 key's spelling the file uses (giving both is an error).
std::string name_in_file(Section& s, const ZeroKey& k) {
  const std::string_view alias = zero_key_alias(k);
  return alias.empty() ? std::string(zero_key_name(k)) : s.pick_alias(alias, k.path);
}

template <typename S, typename T>
void read_value(Section& s, const ZeroKey& k, const S& out, T& v) {
  const std::string name = name_in_file(s, k);
  if constexpr (std::is_same_v<T, bool>) {
    if constexpr (std::is_same_v<S, ZeroConfig>) {
      if (k.on_at_stage3) {
        v = s.get_opt_bool(name).value_or(out.stage == 3);
        return;
      }
    }
    v = s.get_bool(name, v);
  } else if constexpr (std::is_same_v<T, int>) {  // the stage
    const int64_t stage = s.get_int(name, v, k.min);
    check_zero_stage(stage, "config", s.path_of(name), StageWording::expected);
    v = static_cast<int>(stage);
  } else if constexpr (std::is_same_v<T, int64_t>) {
    v = s.get_int(name, v, k.min);
  } else if constexpr (std::is_same_v<T, double>) {
    v = s.get_double(name, v, k.lo, k.hi);
  } else if constexpr (std::is_same_v<T, OffloadDevice>) {
    v = static_cast<OffloadDevice>(s.get_choice(name, kDevices, 0, false));
  } else if constexpr (std::is_same_v<T, std::optional<std::string>>) {
    v = s.get_opt_string(name);
  } else {  // a nested offload section
    if (auto sub = s.get_section(name)) {
      typename T::value_type section;
      read_keys(*sub, section, k.path);
      v = section;
    }
  }
}

// The rows of `section` ("" for zero_optimization itself) into `out`, then the unknown-key check.
template <typename S>
void read_keys(Section& s, S& out, std::string_view section) {
  for_each_zero_key<S>(section,
                       [&](const ZeroKey& k, auto member) { read_value(s, k, out, out.*member); });
  s.finish();
}

}  // namespace

void parse_zero(Section& s, ZeroConfig& z) {
  read_keys(s, z, "");
}

}  // namespace zt::config
