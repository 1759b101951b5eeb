// apply_deprecations (see deprecations.h).
#include "zerotrain/config/deprecations.h"

#include "zerotrain/config/key_table.h"
#include "zerotrain/config/zero_keys.h"
#include "zerotrain/core/error.h"
#include "zerotrain/core/json_util.h"

namespace zt::config {

namespace {

void legacy_zero_flag(Json& root, std::vector<std::string>& warnings) {
  const auto it = root.find("zero_optimization");
  if (it == root.end() || !it->is_boolean()) return;
  Json zero = {{"stage", it->get<bool>() ? 1 : 0}};
  if (it->get<bool>()) {
    const auto size = root.find("allgather_size");
    zero["allgather_bucket_size"] =
        size != root.end() ? *size : Json(zero_keys::kAllgatherBucketSize.default_value);
  }
  root.erase("allgather_size");
  warnings.push_back(
      str("[config] zero_optimization: the boolean form is deprecated; read as ", zero.dump()));
  *it = std::move(zero);
}

void map_key(Json& section, std::string_view section_path, const DeprecatedKey& d,
             std::vector<std::string>& warnings) {
  const auto it = section.find(d.key);
  if (it == section.end()) return;
  const std::string path = join_path(section_path, d.key);
  const std::string target = join_path(section_path, d.replacement);
  if (d.kind != DeprecationKind::no_effect &&
      (section.contains(d.replacement) ||
       (!d.replacement_alias.empty() && section.contains(d.replacement_alias))))
    fail(path, str("deprecated, and its replacement \"", d.replacement,
                   "\" is also given; keep only \"", d.replacement, "\""));
  const Json value = *it;
  section.erase(it);
  switch (d.kind) {
    case DeprecationKind::rename:
      section[std::string(d.replacement)] = value;
      warnings.push_back(str("[config] ", path, " is deprecated; read as ", target));
      return;
    case DeprecationKind::offload_flag:
      if (!value.is_boolean())
        fail(path, str("expected true or false, got ", describe_json(value)));
      if (value.get<bool>()) section[std::string(d.replacement)] = {{"device", "cpu"}};
      warnings.push_back(str("[config] ", path, " is deprecated; read as ", target, " ",
                             value.get<bool>() ? "{\"device\": \"cpu\"}" : "absent"));
      return;
    case DeprecationKind::no_effect:
      if (!value.is_boolean())
        fail(path, str("expected true or false, got ", describe_json(value)));
      warnings.push_back(str("[config] ", path, " is deprecated and has no effect; use ",
                             join_path(section_path, d.replacement)));
      return;
  }
}

}  // namespace

void apply_deprecations(Json& root, std::vector<std::string>& warnings) {
  legacy_zero_flag(root, warnings);
  for (const DeprecatedKey& d : deprecated_keys()) {
    if (d.section.empty()) {
      map_key(root, "", d, warnings);
      continue;
    }
    const auto section = root.find(d.section);
    if (section != root.end() && section->is_object()) map_key(*section, d.section, d, warnings);
  }
}

}  // namespace zt::config
