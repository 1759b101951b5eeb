// corpus_util.h.
#include "config/corpus_util.h"

#include <algorithm>
#include <fstream>
#include <stdexcept>
#include <type_traits>

#include "support/test_util.h"

namespace zt::test {

std::vector<std::filesystem::path> ds_corpus(const std::string& kind) {
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(fixtures_dir() / "ds_configs" / kind)) {
    const std::string name = e.path().filename().string();
    if (name.ends_with(".json") && !name.ends_with(".expect.json")) files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

nlohmann::json ds_expectation(const std::filesystem::path& config) {
  std::filesystem::path sidecar = config;
  sidecar.replace_extension(".expect.json");
  std::ifstream in(sidecar);
  if (!in) throw std::runtime_error("missing sidecar " + sidecar.string());
  return nlohmann::json::parse(in);
}

config::ConfigOverrides overrides_from_json(const nlohmann::json& j) {
  config::ConfigOverrides o;
  // Each key present is a flag the user typed.
  auto given = [&](const char* key, const char* flag, auto& v) {
    if (!j.contains(key)) return;
    v = j[key].get<typename std::decay_t<decltype(v)>::value_type>();
    o.given.insert(flag);
  };
  if (j.contains("world_size")) o.world_size = j["world_size"].get<int64_t>();
  if (j.contains("hidden_size")) o.hidden_size = j["hidden_size"].get<int64_t>();
  given("micro_batch", "--micro-batch", o.micro_batch);
  given("grad_accum", "--grad-accum", o.grad_accum);
  given("steps", "--steps", o.total_steps);
  given("warmup", "--warmup", o.warmup_steps);
  given("lr", "--lr", o.lr);
  given("beta1", "--beta1", o.beta1);
  given("beta2", "--beta2", o.beta2);
  given("eps", "--eps", o.eps);
  given("weight_decay", "--weight-decay", o.weight_decay);
  given("clip", "--clip", o.clip);
  given("dtype", "--dtype", o.dtype);
  return o;
}

const nlohmann::json* json_at(const nlohmann::json& root, const std::string& path) {
  const nlohmann::json* node = &root;
  size_t start = 0;
  while (true) {
    const size_t dot = path.find('.', start);
    const std::string part = path.substr(start, dot - start);
    if (!node->is_object() || !node->contains(part)) return nullptr;
    node = &(*node)[part];
    if (dot == std::string::npos) return node;
    start = dot + 1;
  }
}

}  // namespace zt::test
