// The DeepSpeed spellings of the enums of ds_config.h.
#include "zerotrain/config/ds_config.h"

namespace zt::config {

std::string offload_device_name(OffloadDevice d) {
  switch (d) {
    case OffloadDevice::cpu:
      return "cpu";
    case OffloadDevice::nvme:
      return "nvme";
    default:
      return "none";
  }
}

std::string precision_name(PrecisionName p) {
  switch (p) {
    case PrecisionName::fp16:
      return "fp16";
    case PrecisionName::bf16:
      return "bf16";
    default:
      return "fp32";
  }
}

std::string optimizer_type_name(OptimizerType t) {
  switch (t) {
    case OptimizerType::adam:
      return "Adam";
    case OptimizerType::adamw:
      return "AdamW";
    case OptimizerType::lamb:
      return "Lamb";
    case OptimizerType::lion:
      return "Lion";
    default:
      return "SGD";
  }
}

std::string warmup_type_name(WarmupType t) {
  return t == WarmupType::log ? "log" : "linear";
}

std::string tag_validation_name(TagValidation t) {
  switch (t) {
    case TagValidation::ignore:
      return "IGNORE";
    case TagValidation::fail:
      return "FAIL";
    default:
      return "WARN";
  }
}

}  // namespace zt::config
