// ZT_ATTENTION and the choice between cuDNN and our CUDA attention kernels.
// Tested by tests/kernels/test_attention_cudnn.cpp.
#include "zerotrain/kernels/cuda/attention_select.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <string_view>

#include "zerotrain/core/allocator.h"
#include "zerotrain/core/device.h"
#include "zerotrain/kernels/cuda/cudnn_attention.h"

namespace zt::kernels::cuda {

AttentionMode parse_attention_mode(const char* value) {
  const std::string_view v = value ? value : "";
  if (v.empty() || v == "auto") return AttentionMode::automatic;
  if (v == "cudnn") return AttentionMode::cudnn;
  if (v == "native") return AttentionMode::native;
  throw ValueError("attention", str("ZT_ATTENTION='", v, "': expected auto, cudnn or native"));
}

AttentionMode attention_mode() {
  static const AttentionMode mode = parse_attention_mode(std::getenv("ZT_ATTENTION"));
  return mode;
}

namespace {

// Says once per process that auto mode fell back to our kernels, and why.
void report_fallback(const std::string& why) {
  static std::atomic<bool> reported{false};
  if (reported.exchange(true)) return;
  std::string line = why;
  for (char& c : line)
    if (c == '\n' || c == '\r') c = ' ';
  std::fprintf(stderr, "[attention] cuDNN attention unavailable, using zerotrain's kernels: %s\n",
               line.c_str());
}

// The device's total memory, asked of the driver once per device (every attention call asks).
int64_t device_memory_bytes(int index) {
  static std::mutex mu;
  static std::map<int, int64_t> known;
  std::lock_guard lock(mu);
  const auto [it, fresh] = known.try_emplace(index, 0);
  if (fresh) it->second = static_cast<int64_t>(cuda_device_memory(index));
  return it->second;
}

}  // namespace

AttentionPath choose_attention_path(AttentionMode mode, const Tensor& q, const Tensor& k,
                                    const AttentionOptions& opt, AttentionPass pass) {
  if (mode == AttentionMode::native) return AttentionPath::native;
  const char* op = pass == AttentionPass::forward ? "attention_forward" : "attention_backward";
  const std::string unsupported = cudnn_attention_unsupported(q, k, opt);
  if (!unsupported.empty()) {
    if (mode == AttentionMode::cudnn)
      throw ValueError(
          op, str("ZT_ATTENTION=cudnn, but cuDNN cannot run q ", q.describe(), ": ", unsupported));
    return AttentionPath::native;
  }
  const std::string failure = cudnn_attention_prepare(q, k, opt, pass);
  if (failure.empty()) {
    if (mode == AttentionMode::cudnn) return AttentionPath::cudnn;
    const int64_t workspace = cudnn_attention_workspace_bytes(q, k, opt, pass);
    const int64_t device_bytes = device_memory_bytes(q.device().index);
    if (cudnn_workspace_fits(workspace, device_bytes)) return AttentionPath::cudnn;
    report_fallback(str(op, " of q ", q.describe(), " would take a ",
                        format_bytes(static_cast<size_t>(workspace)), " workspace, over 1/",
                        kCudnnWorkspaceShare, " of the GPU's ",
                        format_bytes(static_cast<size_t>(device_bytes)),
                        " ([Note: cuDNN workspace budget]; ZT_ATTENTION=cudnn takes it anyway)"));
    return AttentionPath::native;
  }
  if (mode == AttentionMode::cudnn)
    throw ValueError(
        op, str("ZT_ATTENTION=cudnn, but cuDNN cannot run q ", q.describe(), ": ", failure));
  report_fallback(failure);
  return AttentionPath::native;
}

}  // namespace zt::kernels::cuda
