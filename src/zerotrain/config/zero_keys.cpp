// check_zero_size, check_zero_stage and short_count (zero_keys.h).
#include "zerotrain/config/zero_keys.h"

#include "zerotrain/core/error.h"

namespace zt::config {

void check_zero_size(const ZeroSizeKey& key, int64_t value, NameFlag name_flag) {
  if (value >= key.min) return;
  const bool flagged = name_flag == NameFlag::yes && !key.flag.empty();
  throw ValueError("config", str("zero_optimization.", key.path,
                                 flagged ? str(" (", key.flag, ")") : std::string(),
                                 ": must be >= ", key.min, ", got ", value));
}

bool valid_zero_stage(int64_t stage) {
  return stage >= 0 && stage <= 3;
}

void check_zero_stage(int64_t stage, std::string_view component, std::string_view what,
                      StageWording wording) {
  if (valid_zero_stage(stage)) return;
  throw ValueError(component,
                   str(what, wording == StageWording::must_be ? ": must be" : ": expected",
                       " 0, 1, 2 or 3, got ", stage));
}

std::string short_count(int64_t n) {
  int zeros = 0;
  int64_t m = n;
  while (m != 0 && m % 10 == 0) {
    m /= 10;
    ++zeros;
  }
  return zeros == 0 || m >= 10 ? std::to_string(n) : str(m, "e", zeros);
}

}  // namespace zt::config
