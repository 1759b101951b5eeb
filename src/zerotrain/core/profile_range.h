// Named ranges on a profiler's timeline (NVTX): Nsight Systems draws each range over the kernels
// launched inside it, and Nsight Compute can pick kernels by range (`ncu --nvtx --nvtx-include
// "backward model.layers.3/"`). With no profiler attached a range costs a check of a function
// pointer; the CPU-only build has none (core/no_cuda.cpp).
#pragma once

#include <string>

namespace zt {

void profile_range_push(const char* name);
void profile_range_pop();

// The range of a scope: pushed on construction, popped on destruction (ranges nest).
class ProfileRange {
 public:
  explicit ProfileRange(const char* name) { profile_range_push(name); }
  explicit ProfileRange(const std::string& name) : ProfileRange(name.c_str()) {}
  ~ProfileRange() { profile_range_pop(); }
  ProfileRange(const ProfileRange&) = delete;
  ProfileRange& operator=(const ProfileRange&) = delete;
};

}  // namespace zt
