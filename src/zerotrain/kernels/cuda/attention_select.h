// Which CUDA attention runs a case: cuDNN's fused flash attention (kernels/cuda/cudnn_attention.h)
// or our kernels (attention_fwd.cu, attention_bwd_*.cu), by the ZT_ATTENTION environment variable:
//   auto (default)  cuDNN when it takes the case (bf16/f16, no sliding window, no packed rows, a
//                   head dim cuDNN runs, compute capability >= 8.0, cuDNN >= 9.0) and its
//                   heuristics give an engine; otherwise our kernels. A case cuDNN should take but
//                   whose plan fails to build, or whose workspace is over the budget below, prints
//                   one line to stderr (once per process) and runs on our kernels.
//   cudnn           cuDNN or an error naming why not.
//   native          our kernels always.
// Plain C++ declarations. Tested by tests/kernels/test_attention_cudnn.cpp.
#pragma once

#include <cstdint>

#include "zerotrain/core/tensor.h"
#include "zerotrain/kernels/attention.h"

namespace zt::kernels::cuda {

enum class AttentionMode { automatic, cudnn, native };

// "auto" (or unset/empty), "cudnn", "native"; anything else is a ValueError naming the value.
AttentionMode parse_attention_mode(const char* value);

// ZT_ATTENTION, parsed on first use and kept for the process.
AttentionMode attention_mode();

// [Note: cuDNN workspace budget]
// cuDNN's deterministic backward keeps dP in its workspace, about B * Hq * S^2 * 2 bytes: 2 GiB for
// the 1B shape at micro-batch 2 and seq 4096, but 64 GiB at seq 32768, where our kernels need
// memory linear in S. In auto mode a plan whose workspace is more than 1/8 of the GPU's memory
// runs on our kernels instead of running the GPU out of memory. The rule reads only the shape and
// the GPU's size, so every rank and every run of a job takes the same path (the paths differ in
// their bits). ZT_ATTENTION=cudnn takes cuDNN regardless.
inline constexpr int64_t kCudnnWorkspaceShare = 8;  // at most 1/8 of the device's memory

// Whether a cuDNN plan's workspace fits the budget on a device of `device_bytes`.
inline bool cudnn_workspace_fits(int64_t workspace_bytes, int64_t device_bytes) {
  return workspace_bytes <= device_bytes / kCudnnWorkspaceShare;
}

enum class AttentionPath { native, cudnn };

// The path `mode` picks for this case (opt resolved). With AttentionMode::cudnn a case cuDNN cannot
// run is a ValueError naming why.
AttentionPath choose_attention_path(AttentionMode mode, const Tensor& q, const Tensor& k,
                                    const AttentionOptions& opt, AttentionPass pass);

inline const char* attention_path_name(AttentionPath p) {
  return p == AttentionPath::cudnn ? "cudnn" : "native";
}

}  // namespace zt::kernels::cuda
