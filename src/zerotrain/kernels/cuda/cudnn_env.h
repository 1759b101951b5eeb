// The ZT_CUDNN_* environment variables that steer how kernels/cuda/cudnn_attention.cpp picks and
// reports cuDNN's plans, each parsed once per process (a malformed value is a ValueError naming it):
//   ZT_CUDNN_DEBUG=1        one stderr line per step: the graph, each engine configuration cuDNN's
//                           heuristics propose with whether it builds, the plan taken, its workspace.
//   ZT_CUDNN_CONFIG=N       take the N-th configuration that builds (heuristics A, then B, then the
//                           fallback list) instead of the first: to time the alternatives.
//   ZT_CUDNN_ENGINE="[GRAPH@]E[:T=V,...]"  build the plan of graph GRAPH ("attention forward" or
//                           "attention backward"; every graph when omitted) from engine E with
//                           backend knob type T set to V, instead of from heuristics (tuning).
//   ZT_CUDNN_GQA=fused|expand  how a grouped-query backward sums its heads' dK and dV: inside
//                           cuDNN's graph (fused, the default) or here in f32 (expand; issue 32's
//                           experiment, [Note: cuDNN's grouped-query gradients]).
// Plain C++: no cuDNN here. Tested by tests/kernels/test_attention_cudnn.cpp.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace zt::kernels::cuda::cudnn_env {

// Whether ZT_CUDNN_DEBUG=1.
bool debug_enabled();

// Prints "[cudnn] <line>" to stderr when debug_enabled().
void debug_line(const std::string& line);

// ZT_CUDNN_GQA: true for "expand", false for "fused" or unset; ValueError otherwise.
bool group_sum_outside_from(const char* value);
// The process's ZT_CUDNN_GQA, parsed once.
bool group_sum_outside();

// ZT_CUDNN_CONFIG: how many buildable configurations to skip (0 when unset).
int64_t configurations_to_skip();

// ZT_CUDNN_ENGINE, parsed.
struct EngineRequest {
  std::string graph;  // empty: every graph
  int64_t engine = -1;
  std::vector<std::pair<int64_t, int64_t>> knobs;  // (cudnnBackendKnobType_t value, choice)
};

// The parse of `text` (ZT_CUDNN_ENGINE's syntax); throws ValueError on a malformed one.
EngineRequest parse_engine_request(const std::string& text);

// The engine ZT_CUDNN_ENGINE asks for graph `graph_name`, or nullopt (unset, or for another graph).
std::optional<EngineRequest> engine_requested_for(const std::string& graph_name);

}  // namespace zt::kernels::cuda::cudnn_env
