// Launcher variables -> ProcessEnv. See process_env.h.
#include "zerotrain/comm/process_env.h"

#include <charconv>
#include <cmath>
#include <cstdlib>

#include "zerotrain/core/error.h"

extern char** environ;

namespace zt::comm {
namespace {

const std::string* find(const EnvMap& env, const char* key) {
  auto it = env.find(key);
  return it == env.end() ? nullptr : &it->second;
}

int parse_int(const EnvMap& env, const char* key, int min_value) {
  const std::string* v = find(env, key);
  ZT_ASSERT(v != nullptr, "comm", key);
  int out = 0;
  auto [end, ec] = std::from_chars(v->data(), v->data() + v->size(), out);
  if (ec != std::errc() || end != v->data() + v->size() || out < min_value)
    throw ValueError("comm",
                     str(key, ": expected an integer >= ", min_value, ", got \"", *v, "\""));
  return out;
}

int parse_int_or(const EnvMap& env, const char* key, int min_value, int fallback) {
  return find(env, key) ? parse_int(env, key, min_value) : fallback;
}

// Reads one launcher's triple of variables; local_key may be absent (then local rank = rank).
ProcessEnv read_triple(const EnvMap& env, const char* rank_key, const char* size_key,
                       const char* local_key, LaunchSource source) {
  if (!find(env, size_key))
    throw ValueError("comm", str(rank_key, " is set but ", size_key, " is not"));
  ProcessEnv p;
  p.source = source;
  p.rank = parse_int(env, rank_key, 0);
  p.world_size = parse_int(env, size_key, 1);
  p.local_rank = parse_int_or(env, local_key, 0, p.rank);
  if (p.rank >= p.world_size)
    throw ValueError("comm",
                     str(rank_key, "=", p.rank, " is not below ", size_key, "=", p.world_size));
  if (p.local_rank > p.rank)
    throw ValueError("comm",
                     str(local_key, "=", p.local_rank, " is above ", rank_key, "=", p.rank));
  return p;
}

}  // namespace

ProcessEnv detect_process_env(const EnvMap& env) {
  ProcessEnv p;
  if (find(env, "OMPI_COMM_WORLD_RANK"))
    p = read_triple(env, "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
                    "OMPI_COMM_WORLD_LOCAL_RANK", LaunchSource::openmpi);
  else if (find(env, "RANK"))
    p = read_triple(env, "RANK", "WORLD_SIZE", "LOCAL_RANK", LaunchSource::torchrun);
  else if (find(env, "SLURM_PROCID"))
    p = read_triple(env, "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", LaunchSource::slurm);
  if (const std::string* addr = find(env, "MASTER_ADDR")) p.master_addr = *addr;
  p.master_port = parse_int_or(env, "MASTER_PORT", 1, 0);
  if (p.master_port > 65535)
    throw ValueError("comm", str("MASTER_PORT: expected a port 1..65535, got ", p.master_port));
  return p;
}

EnvMap current_env() {
  EnvMap env;
  for (char** e = environ; e && *e; ++e) {
    std::string kv = *e;
    size_t eq = kv.find('=');
    if (eq != std::string::npos) env.emplace(kv.substr(0, eq), kv.substr(eq + 1));
  }
  return env;
}

ProcessEnv detect_process_env() {
  return detect_process_env(current_env());
}

const char* launch_source_name(LaunchSource s) {
  switch (s) {
    case LaunchSource::openmpi:
      return "openmpi";
    case LaunchSource::torchrun:
      return "torchrun";
    case LaunchSource::slurm:
      return "slurm";
    case LaunchSource::single:
      return "single";
  }
  return "?";
}

double comm_timeout_seconds(const EnvMap& env) {
  const std::string* v = find(env, "ZEROTRAIN_COMM_TIMEOUT");
  if (!v) return 600.0;
  char* end = nullptr;
  double s = std::strtod(v->c_str(), &end);
  if (v->empty() || *end != '\0' || !std::isfinite(s) || s <= 0)
    throw ValueError(
        "comm",
        str("ZEROTRAIN_COMM_TIMEOUT: expected a positive number of seconds, got \"", *v, "\""));
  return s;
}

double comm_timeout_seconds() {
  return comm_timeout_seconds(current_env());
}

}  // namespace zt::comm
