// The CUDA side of the optimizers: fused multi-tensor launches over lists of runs (one launch per
// 32 runs of the same grad/copy dtypes), the same f32 update sequence as the CPU kernels
// (optim/cpu/kernels_impl.h) up to FMA contraction. Arguments are checked by the front-end
// (optim/optimizers.cpp). Tested by tests/optim/test_optimizers_cuda.cpp.
#pragma once

#include <span>

#include "zerotrain/core/device.h"
#include "zerotrain/core/stream.h"
#include "zerotrain/optim/cpu/consts.h"

namespace zt::optim::cuda {

void adam(std::span<const cpu::Run> runs, std::span<const cpu::AdamConsts> consts, Device device,
          Stream stream);
// Adam on bf16 values and moments, in place (optim/low_precision.h); cuda/optimizers_lowp.cu.
void adam_lowp(std::span<const cpu::RunLowp> runs, std::span<const cpu::AdamConsts> consts,
               Device device, Stream stream);
void lion(std::span<const cpu::Run> runs, std::span<const cpu::LionConsts> consts, Device device,
          Stream stream);
void sgd(std::span<const cpu::Run> runs, std::span<const cpu::SgdConsts> consts, Device device,
         Stream stream);

}  // namespace zt::optim::cuda
