// CUDA LAMB (DeepSpeed FusedLamb semantics, see optim/optimizers.h) over lists of flat-segment
// runs, in two passes as on the CPU: lamb_moments updates m and v and leaves each run's sum p^2 and
// sum u^2 in a device buffer; lamb_apply turns them into the trust ratio and updates the params
// (and their copies). A ZeRO engine whose runs are pieces of parameters can all-reduce the norms
// between the passes. Arguments are checked by the front-end (optim/optimizers.cpp).
// See [Note: CUDA LAMB] in lamb.cu. Tested by tests/optim/test_optimizers_cuda.cpp.
#pragma once

#include <span>

#include "zerotrain/core/device.h"
#include "zerotrain/core/stream.h"
#include "zerotrain/optim/cpu/consts.h"

namespace zt::optim::cuda {

// The trust-ratio inputs of pass 2 (LambConsts::lr_coeff is computed on the device).
struct LambTrust {
  float lr;
  float min_coeff;
  float max_coeff;
};

// norms: device memory, [2 * runs.size()] f64; receives sum p^2 at 2 r and sum u^2 at 2 r + 1 for
// run r (0 for an empty run). Enqueued on `stream`.
void lamb_moments(std::span<const cpu::Run> runs, std::span<const cpu::LambConsts> consts,
                  double* norms, Device device, Stream stream);
// norms as lamb_moments left them (or summed over ranks).
void lamb_apply(std::span<const cpu::Run> runs, std::span<const cpu::LambConsts> consts,
                const double* norms, const LambTrust& trust, Device device, Stream stream);
// Both passes, with the norms in a stream-ordered scratch buffer.
void lamb(std::span<const cpu::Run> runs, std::span<const cpu::LambConsts> consts,
          const LambTrust& trust, Device device, Stream stream);

}  // namespace zt::optim::cuda
