// Where a tensor lives: the host, or CUDA device N.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace zt {

enum class DeviceKind : unsigned char { cpu, cuda };

struct Device {
  DeviceKind kind = DeviceKind::cpu;
  int index = 0;  // CUDA ordinal; always 0 for cpu

  static Device cpu() { return {DeviceKind::cpu, 0}; }
  static Device cuda(int i = 0) { return {DeviceKind::cuda, i}; }
  bool is_cpu() const { return kind == DeviceKind::cpu; }
  bool is_cuda() const { return kind == DeviceKind::cuda; }
  bool operator==(const Device&) const = default;
};

std::string to_string(Device d);          // "cpu", "cuda:0"
Device parse_device(std::string_view s);  // "cpu", "cuda", "cuda:3"

// True when this build has the CUDA backend and at least one device is visible.
bool cuda_available();
int cuda_device_count();                  // 0 without CUDA
std::string cuda_device_name(int index);  // "NVIDIA H100 80GB HBM3"; throws without CUDA
size_t cuda_device_memory(int index);     // total bytes of the device; throws without CUDA

}  // namespace zt
