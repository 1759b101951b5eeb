#include "zerotrain/core/error.h"

namespace zt {

void throw_no_cuda(std::string_view op) {
  throw DeviceError(op,
                    "has no CUDA implementation in this build (zerotrain was built without CUDA)");
}

}  // namespace zt
