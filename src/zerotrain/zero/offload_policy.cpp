// The offload policy's one check; see offload_policy.h.
#include "zerotrain/zero/offload_policy.h"

#include "zerotrain/core/error.h"

namespace zt::zero {

namespace {

// key: under zero_optimization, or a top-level section's ("aio.block_size").
[[noreturn]] void fail(const std::string& key, const std::string& why) {
  const bool top_level = key.starts_with("aio.");
  throw ValueError("config", str(top_level ? "" : "zero_optimization.", key, ": ", why));
}

void at_least(const std::string& key, int64_t value, int64_t least) {
  if (value < least) fail(key, str("must be >= ", least, ", got ", value));
}

void check_target(const std::string& section, const OffloadTarget& t) {
  if (t.device == OffloadDevice::none) return;
  if (t.device == OffloadDevice::nvme && t.nvme_path.empty())
    fail(section + ".nvme_path", "device nvme needs a directory to swap to (--nvme-path)");
  at_least(section + ".buffer_count", t.buffer_count, 1);
}

}  // namespace

void validate_offload_policy(const OffloadPolicy& p, int stage) {
  const OptimizerOffload& o = p.optimizer;
  if (o.device != OffloadDevice::none && stage < 1)
    fail("offload_optimizer.device (--offload-optimizer)",
         str(config::offload_device_name(o.device), " needs ZeRO stage 1, 2 or 3, got stage ",
             stage));
  if (!(o.ratio > 0.0 && o.ratio <= 1.0))
    fail("offload_optimizer.ratio", str("must be in (0, 1], got ", o.ratio));
  if (o.ratio < 1.0 && (stage != 3 || o.device == OffloadDevice::none))
    fail("offload_optimizer.ratio",
         str("a partial offload (", o.ratio, ") needs ZeRO stage 3 and an offload device"));
  check_target("offload_optimizer", o);
  const ParamOffload& q = p.params;
  if (q.device != OffloadDevice::none && stage != 3)
    fail("offload_param.device (--offload-param)",
         str(config::offload_device_name(q.device), " needs ZeRO stage 3, got stage ", stage));
  check_target("offload_param", q);
  if (q.device == OffloadDevice::nvme) {
    at_least("offload_param.buffer_size", q.buffer_size, 1);
    config::check_zero_size(config::zero_keys::kParamMaxInCpu, q.max_in_cpu);
  }
  config::check_zero_size(config::zero_keys::kSubGroupSize, p.sub_group_size, config::NameFlag::no);
  if (o.device == OffloadDevice::nvme || q.device == OffloadDevice::nvme) {
    at_least("aio.block_size", p.aio.block_size, 1);
    at_least("aio.queue_depth", p.aio.queue_depth, 1);
    at_least("aio.intra_op_parallelism", p.aio.intra_op_parallelism, 1);
  }
}

}  // namespace zt::zero
