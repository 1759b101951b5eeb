// Names of the precision modes; see precision.h. Tested by tests/train/test_low_precision.cpp.
#include "zerotrain/optim/precision.h"

#include "zerotrain/core/error.h"

namespace zt::optim {

std::string_view precision_name(Precision p) {
  return p == Precision::low ? "low" : "mixed";
}

Precision parse_precision(std::string_view name) {
  if (name == "mixed") return Precision::mixed;
  if (name == "low") return Precision::low;
  throw ValueError("optim", str("precision \"", name, "\": expected mixed or low"));
}

}  // namespace zt::optim
