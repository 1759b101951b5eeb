// Front-end of the low-precision Adam: run checks, the shared constants (adam_common.h), then the
// CPU driver or the CUDA launches. See low_precision.h. Tested by
// tests/optim/test_low_precision_optim.cpp.
#include "zerotrain/optim/low_precision.h"

#include <cmath>
#include <string_view>
#include <vector>

#include "zerotrain/core/error.h"
#include "zerotrain/kernels/dispatch.h"
#include "zerotrain/optim/adam_common.h"
#include "zerotrain/optim/cpu/driver.h"
#if ZT_WITH_CUDA
#include "zerotrain/optim/cuda/launch.h"
#endif

namespace zt::optim {

namespace {

constexpr std::string_view kOp = "adam_step_lowp";

cpu::RunLowp check_run(const AdamSegmentLowp& s, size_t index) {
  auto fail = [&](std::string_view what) {
    throw ValueError("optim", str(kOp, ": run #", index, ": ", what));
  };
  if (s.n < 0) fail(str("n = ", s.n, ": must be >= 0"));
  if (!(s.weight_decay >= 0.f) || !std::isfinite(s.weight_decay))
    fail(str("weight_decay = ", s.weight_decay, ": must be finite and >= 0"));
  if (s.grad_dtype != DType::f32 && s.grad_dtype != DType::bf16 && s.grad_dtype != DType::f16)
    throw DTypeError("optim", str(kOp, ": run #", index, ": grad_dtype ", dtype_name(s.grad_dtype),
                                  ", expected f32, bf16 or f16"));
  if (s.n > 0) {
    if (!s.param) fail("param is null");
    if (!s.exp_avg) fail("exp_avg is null");
    if (!s.exp_avg_sq) fail("exp_avg_sq is null");
    if (!s.grad) fail("grad is null");
  }
  return cpu::RunLowp{s.param, s.exp_avg, s.exp_avg_sq, s.grad, s.grad_dtype, s.n};
}

}  // namespace

void adam_step_lowp(std::span<const AdamSegmentLowp> runs, const AdamParams& hp,
                    const StepArgs& args, Device device, Stream stream) {
  check_adam(kOp, hp, args);
  if (hp.amsgrad)
    throw ValueError("optim",
                     str(kOp, ": amsgrad needs a third moment; the low-precision mode has none"));
  std::vector<cpu::RunLowp> rs;
  std::vector<cpu::AdamConsts> cs;
  for (size_t i = 0; i < runs.size(); ++i) {
    rs.push_back(check_run(runs[i], i));
    cs.push_back(adam_consts(hp, args, runs[i].weight_decay));
  }
  if (device.is_cuda())
    ZT_ON_CUDA("adam_step_lowp", cuda::adam_lowp(rs, cs, device, stream));
  else
    cpu::adam_lowp(rs, cs, cpu::kernel_table(args.isa));
}

}  // namespace zt::optim
