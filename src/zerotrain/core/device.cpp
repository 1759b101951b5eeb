#include "zerotrain/core/device.h"

#include <charconv>

#include "zerotrain/core/error.h"

namespace zt {

std::string to_string(Device d) {
  return d.is_cpu() ? "cpu" : str("cuda:", d.index);
}

Device parse_device(std::string_view s) {
  if (s == "cpu") return Device::cpu();
  if (s == "cuda") return Device::cuda(0);
  if (s.starts_with("cuda:")) {
    int i = -1;
    auto rest = s.substr(5);
    auto [p, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), i);
    if (ec == std::errc() && p == rest.data() + rest.size() && i >= 0) return Device::cuda(i);
  }
  throw ValueError("device", str("unknown device \"", s, "\"; expected cpu, cuda or cuda:N"));
}

bool cuda_available() {
  return cuda_device_count() > 0;
}

}  // namespace zt
