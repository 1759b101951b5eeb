// The faults section; see fault_config.h. Tested by tests/train/test_faults.cpp.
#include "zerotrain/train/fault_config.h"

#include <cmath>

#include "zerotrain/core/error.h"
#include "zerotrain/core/json_util.h"

namespace zt::train {

NonFinitePolicy parse_nonfinite_policy(const std::string& name) {
  if (name == "stop") return NonFinitePolicy::stop;
  if (name == "skip") return NonFinitePolicy::skip;
  throw ValueError("config", str("--on-nonfinite: must be stop or skip, got ", quote_excerpt(name)));
}

const char* nonfinite_policy_name(NonFinitePolicy p) {
  return p == NonFinitePolicy::stop ? "stop" : "skip";
}

void validate_fault_config(const FaultConfig& f) {
  if (!(f.stop_grace_s > 0) || !std::isfinite(f.stop_grace_s))
    throw ValueError("config", str("--stop-grace: must be > 0 seconds, got ", f.stop_grace_s));
}

}  // namespace zt::train
