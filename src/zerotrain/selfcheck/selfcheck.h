// The runtime self-check (`zerotrain selfcheck`): every differentiable kernel's backward against
// central finite differences of its forward on the CPU, and, when a GPU is visible, every kernel's
// CUDA result against its CPU result in f32 and bf16. It is the quick proof that a build works on
// the machine in hand; the full proofs are the unit tests in tests/.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace zt::selfcheck {

struct Result {
  std::string op;     // "rmsnorm"
  std::string check;  // "fd-grad cpu f32", "cuda vs cpu bf16"
  double error = 0;   // relative error measured
  double tolerance = 0;
  bool passed() const { return error <= tolerance; }  // false for NaN
};

struct Options {
  bool cpu = true;
  bool cuda = true;  // only when a GPU is visible
  uint64_t seed = 1;
};

// Runs every check; `on_result` sees each result as it lands (for progress output).
std::vector<Result> run_all(const Options& opt,
                            const std::function<void(const Result&)>& on_result);

}  // namespace zt::selfcheck
