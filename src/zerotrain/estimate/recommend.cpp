// The fastest configuration that fits (see recommend.h, [Note: recommendation order]).
#include "zerotrain/estimate/recommend.h"

#include "zerotrain/estimate/checks.h"
#include "zerotrain/estimate/units.h"

namespace zt::estimate {

namespace {

RunSetup with(const RunSetup& base, const Strategy& s, int64_t micro_batch, bool ac) {
  RunSetup r = base;
  r.stage = s.stage;
  r.offload_optimizer = s.offload_optimizer;
  r.offload_param = s.offload_param;
  r.micro_batch = micro_batch;
  r.activation_checkpointing = ac;
  return r;
}

}  // namespace

std::vector<Strategy> strategies_in_order() {
  return {{0, false, false}, {1, false, false}, {2, false, false},
          {3, false, false}, {3, true, false},  {3, true, true}};
}

Recommendation recommend(const RunSetup& base, double gpu_memory,
                         const std::vector<Strategy>& strategies) {
  require_positive(gpu_memory, "gpu_memory");
  require_positive(base.micro_batch, "micro_batch");
  std::vector<Strategy> search;
  for (const Strategy& s : strategies)
    if (!base.host_run || !(s.offload_optimizer || s.offload_param)) search.push_back(s);
  if (search.empty())
    throw ValueError(kComponent, "strategies: nothing to search (a host run has no offload)");
  const char* per = base.host_run ? " GiB per rank" : " GiB per GPU";
  Recommendation r;
  r.gpu_memory = gpu_memory;
  for (int64_t m = base.micro_batch; m >= 1; m /= 2) {
    for (bool ac : {false, true}) {
      for (const Strategy& s : search) {
        PeakEstimate e = estimate_peak(with(base, s, m, ac));
        if (e.needed <= gpu_memory) {
          r.found = true;
          r.line = str("recommended: ", describe(e.setup), " (", format_gib(e.needed), " of ",
                       format_gib(gpu_memory), per, ")");
          r.estimate = std::move(e);
          return r;
        }
      }
    }
  }
  r.estimate = estimate_peak(with(base, search.back(), 1, true));
  r.line = str("nothing fits in ", format_gib(gpu_memory), per, ": the most frugal setup (",
               describe(r.estimate.setup), ") needs ", format_gib(r.estimate.needed),
               " GiB; use more GPUs or a shorter sequence");
  return r;
}

}  // namespace zt::estimate
