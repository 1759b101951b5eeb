// A deterministic crash for the crash-safety harness (tests/checkpoint/checkpoint_cli.py): every
// file operation of a checkpoint save calls fault_point(); when the environment variable
// ZT_CHECKPOINT_KILL_AT is N >= 1, the N-th call of the process (counted from 1) kills it with
// SIGKILL, as a power cut or the OOM killer would, before the operation happens. Unset: nothing.
#pragma once

namespace zt::checkpoint {

// `what` names the operation for ZT_CHECKPOINT_FAULT_LOG, which, when set to a path, gets one
// line per call ("<n> <what>") so the harness can count and name the moments.
void fault_point(const char* what);

}  // namespace zt::checkpoint
