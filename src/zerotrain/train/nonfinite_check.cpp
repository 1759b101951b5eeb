// The stop on a non-finite loss or gradient; see [Note: non-finite check] in nonfinite_check.h.
#include "zerotrain/train/nonfinite_check.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "zerotrain/core/error.h"
#include "zerotrain/train/owned_gradients.h"

namespace zt::train {

namespace {

constexpr int64_t kScanChunk = int64_t{1} << 20;  // elements read back to the host at a time

bool all_finite(const Tensor& values, Stream stream) {
  for (int64_t at = 0; at < values.numel(); at += kScanChunk) {
    const std::vector<float> xs =
        values.slice(0, at, std::min(values.numel(), at + kScanChunk)).to_floats(stream);
    if (!std::all_of(xs.begin(), xs.end(), [](float x) { return std::isfinite(x); })) return false;
  }
  return true;
}

}  // namespace

std::string first_nonfinite_gradient(zero::ZeroStage& engine, comm::Communicator* comm,
                                     Stream stream) {
  const std::vector<OwnedGradient> owned = owned_gradients(engine);
  constexpr int64_t kNone = std::numeric_limits<int32_t>::max();
  int64_t mine = kNone;
  for (const OwnedGradient& g : owned)
    if (!all_finite(g.values, stream)) {
      mine = g.index;
      break;
    }
  // The smallest index over the ranks: each rank's in turn, through the engine's exact sum.
  int64_t first = mine;
  if (comm)
    for (int r = 0; r < comm->size(); ++r)
      first = std::min(first, static_cast<int64_t>(engine.sum_over_ranks(
                                  comm->rank() == r ? static_cast<double>(mine) : 0.0)));
  if (first == kNone) return {};
  int64_t index = 0;
  for (const auto& group : engine.groups())
    for (const nn::Parameter* p : group->params())
      if (index++ == first) return p->name;
  return {};
}

std::string first_nonfinite_parameter(zero::ZeroStage& engine, Stream stream) {
  std::string first;
  // Every group is visited (stage 3 gathers each in turn, collectively) even after a find.
  engine.for_each_full_group([&](const zero::ParamGroup& group) {
    for (const nn::Parameter* p : group.params())
      if (first.empty() && p->value.defined() && !all_finite(p->value.flatten(), stream))
        first = p->name;
  });
  return first;
}

void stop_on_nonfinite(const TrainConfig& c, bool loss_scaling, int64_t step, double loss,
                       double grad_norm, zero::ZeroStage& engine, Stream stream) {
  if (loss_scaling) return;  // fp16: the loss scaler's overflow ([Note: fp16 step])
  if (!std::isfinite(loss)) {
    const std::string name = first_nonfinite_parameter(engine, stream);
    throw ValueError(
        "train", str("step ", step, ": the loss is ", loss,
                     name.empty() ? std::string()
                                  : str("; parameter ", name, " holds NaN or Inf (at a run's first "
                                        "step: as loaded)"),
                     "; stopped (the last checkpoint is kept, model/ is not written)"));
  }
  if (std::isfinite(grad_norm) || c.faults.on_nonfinite == NonFinitePolicy::skip) return;
  const std::string name = first_nonfinite_gradient(engine, c.comm, stream);
  throw ValueError(
      "train", str("step ", step, ": the gradient norm is ", grad_norm, ", first in the gradient of ",
                   name.empty() ? std::string("(no parameter found)") : name,
                   "; stopped (--on-nonfinite stop; the last checkpoint is kept, model/ is not "
                   "written; --on-nonfinite skip skips such steps)"));
}

}  // namespace zt::train
