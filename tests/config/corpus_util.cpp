// corpus_util.h.
#include "config/corpus_util.h"

#include <algorithm>
#include <fstream>
#include <stdexcept>

#include "support/test_util.h"

namespace zt::test {

std::vector<std::filesystem::path> ds_corpus(const std::string& kind) {
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(test_data_dir() / "ds_configs" / kind)) {
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
  auto given_int = [&](const char* key, config::CliValue<int64_t>& v) {
    if (j.contains(key)) v = config::CliValue<int64_t>::explicit_value(j[key].get<int64_t>());
  };
  auto given_double = [&](const char* key, config::CliValue<double>& v) {
    if (j.contains(key)) v = config::CliValue<double>::explicit_value(j[key].get<double>());
  };
  if (j.contains("world_size")) o.world_size = j["world_size"].get<int64_t>();
  if (j.contains("hidden_size")) o.hidden_size = j["hidden_size"].get<int64_t>();
  given_int("micro_batch", o.micro_batch);
  given_int("grad_accum", o.grad_accum);
  given_int("steps", o.total_steps);
  given_int("warmup", o.warmup_steps);
  given_double("lr", o.lr);
  given_double("beta1", o.beta1);
  given_double("beta2", o.beta2);
  given_double("eps", o.eps);
  given_double("weight_decay", o.weight_decay);
  given_double("clip", o.clip);
  if (j.contains("dtype"))
    o.dtype = config::CliValue<std::string>::explicit_value(j["dtype"].get<std::string>());
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
