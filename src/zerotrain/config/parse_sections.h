// The per-section parsers behind load_ds_config (load.h): each reads every key DeepSpeed 0.19
// accepts in its section with json_walk.h's getters (defaults as DeepSpeed's), then calls
// finish() so that any other key is reported. Internal to config/.
#pragma once

#include <string>
#include <vector>

#include "zerotrain/config/ds_config.h"
#include "zerotrain/config/json_walk.h"

namespace zt::config {

void parse_zero(Section& s, ZeroConfig& z);        // zero_optimization
void parse_precision(Section& root, DsConfig& c);  // fp16, bf16, amp, *data_type*
void parse_optimizer(Section& s, OptimizerConfig& o);
void parse_scheduler(Section& s, SchedulerConfig& sc);  // scheduler
void parse_misc(Section& root, DsConfig& c);            // checkpointing, monitors, aio, ...

}  // namespace zt::config
