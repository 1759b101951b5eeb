// The ZT_CUDNN_* environment variables of cuDNN's plan choice. Tested by
// tests/kernels/test_attention_cudnn.cpp.
#include "zerotrain/kernels/cuda/cudnn_env.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "zerotrain/core/error.h"

namespace zt::kernels::cuda::cudnn_env {

bool debug_enabled() {
  static const bool on = [] {
    const char* v = std::getenv("ZT_CUDNN_DEBUG");
    return v && std::strcmp(v, "1") == 0;
  }();
  return on;
}

void debug_line(const std::string& line) {
  if (debug_enabled()) std::fprintf(stderr, "[cudnn] %s\n", line.c_str());
}

int64_t configurations_to_skip() {
  static const int64_t skip = [] {
    const char* v = std::getenv("ZT_CUDNN_CONFIG");
    if (!v || !*v) return int64_t{0};
    char* end = nullptr;
    const long long n = std::strtoll(v, &end, 10);
    if (*end != '\0' || n < 0)
      throw ValueError("cudnn", str("ZT_CUDNN_CONFIG='", v, "': must be a count >= 0"));
    return static_cast<int64_t>(n);
  }();
  return skip;
}

bool group_sum_outside_from(const char* value) {
  if (!value || !*value || std::strcmp(value, "fused") == 0) return false;
  if (std::strcmp(value, "expand") == 0) return true;
  throw ValueError("cudnn", str("ZT_CUDNN_GQA='", value, "': must be fused or expand"));
}

bool group_sum_outside() {
  static const bool outside = group_sum_outside_from(std::getenv("ZT_CUDNN_GQA"));
  return outside;
}

EngineRequest parse_engine_request(const std::string& text) {
  const auto bad = [&] {
    return ValueError("cudnn",
                      str("ZT_CUDNN_ENGINE='", text, "': expected [GRAPH@]ENGINE[:TYPE=VALUE,...]"));
  };
  EngineRequest r;
  const size_t at = text.find('@');
  if (at != std::string::npos) r.graph = text.substr(0, at);
  std::istringstream in(at == std::string::npos ? text : text.substr(at + 1));
  char sep = 0;
  if (!(in >> r.engine) || r.engine < 0) throw bad();
  if (in >> sep) {
    if (sep != ':') throw bad();
    do {
      int64_t type = 0, value = 0;
      char eq = 0;
      if (!(in >> type >> eq >> value) || eq != '=') throw bad();
      r.knobs.emplace_back(type, value);
    } while (in >> sep && sep == ',');
    if (!in.eof()) throw bad();
  }
  return r;
}

std::optional<EngineRequest> engine_requested_for(const std::string& graph_name) {
  static const std::optional<EngineRequest> request = []() -> std::optional<EngineRequest> {
    const char* v = std::getenv("ZT_CUDNN_ENGINE");
    if (!v || !*v) return std::nullopt;
    return parse_engine_request(v);
  }();
  if (request && (request->graph.empty() || request->graph == graph_name)) return request;
  return std::nullopt;
}

}  // namespace zt::kernels::cuda::cudnn_env
