// The fastest configuration that fits (see recommend.h, [Note: recommendation order]).
#include "zerotrain/estimate/recommend.h"

#include "zerotrain/estimate/checks.h"
#include "zerotrain/estimate/units.h"

namespace zt::estimate {

namespace {

RunSetup with(const RunSetup& base, const Strategy& s, int64_t micro_batch, bool ac) {
  RunSetup r = base;
  r.stage = s.stage;
  if (r.stage == 0) r.shard_group_size = 1;  // stage 0 shards nothing: no hybrid sharding
  r.offload_optimizer = s.offload_optimizer;
  r.offload_param = s.offload_param;
  r.micro_batch = micro_batch;
  r.grad_accum = base.grad_accum * (base.micro_batch / micro_batch);  // the same rows per step
  r.activation_checkpointing = ac;
  return r;
}

}  // namespace

std::vector<Strategy> strategies_in_order() {
  constexpr OffloadDevice none = OffloadDevice::none, cpu = OffloadDevice::cpu,
                          nvme = OffloadDevice::nvme;
  return {{0, none, none}, {1, none, none}, {2, none, none}, {3, none, none}, {2, cpu, none},
          {3, cpu, none},  {3, cpu, cpu},   {2, nvme, none}, {3, nvme, cpu},  {3, nvme, nvme}};
}

Recommendation recommend(const RunSetup& base, double gpu_memory,
                         const std::vector<Strategy>& strategies, double host_memory) {
  require_positive(gpu_memory, "gpu_memory");
  require_non_negative(host_memory, "host_memory");
  require_positive(base.micro_batch, "micro_batch");
  std::vector<Strategy> search;
  for (const Strategy& s : strategies)
    if (!base.host_run || !(offloaded(s.offload_optimizer) || offloaded(s.offload_param)))
      search.push_back(s);
  if (search.empty())
    throw ValueError(kComponent, "strategies: nothing to search (a host run has no offload)");
  const char* per = base.host_run ? " GiB per rank" : " GiB per GPU";
  auto host_text = [&](const PeakEstimate& e) -> std::string {
    if (!(e.host_per_node > 0)) return "";
    return str("; host ", format_gib(e.host_per_node),
               host_memory > 0 ? str(" of ", format_gib(host_memory)) : std::string(),
               " GiB per node");
  };
  Recommendation r;
  r.gpu_memory = gpu_memory;
  r.host_memory = host_memory;
  for (int64_t m = base.micro_batch; m >= 1; m /= 2) {
    for (bool ac : {false, true}) {
      for (const Strategy& s : search) {
        PeakEstimate e = estimate_peak(with(base, s, m, ac));
        const bool host_fits = !(host_memory > 0) || e.host_per_node <= host_memory;
        if (e.needed <= gpu_memory && host_fits) {
          r.found = true;
          r.line = str("recommended: ", describe(e.setup), " (", format_gib(e.needed), " of ",
                       format_gib(gpu_memory), per, host_text(e), ")");
          r.estimate = std::move(e);
          return r;
        }
      }
    }
  }
  r.estimate = estimate_peak(with(base, search.back(), 1, true));
  r.line =
      str("nothing fits in ", format_gib(gpu_memory), per,
          host_memory > 0 ? str(" and ", format_gib(host_memory), " GiB of host memory per node")
                          : std::string(),
          ": the most frugal setup (", describe(r.estimate.setup), ") needs ",
          format_gib(r.estimate.needed), " GiB", host_text(r.estimate),
          "; use more GPUs or a shorter sequence");
  return r;
}

}  // namespace zt::estimate
