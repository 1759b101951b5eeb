// real_corpus.h.
#include "config/real_corpus.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "support/test_util.h"

namespace zt::test {

namespace {

std::string lower(std::string s) {
  for (char& c : s)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::optional<int64_t> positive_number(const nlohmann::json& file, const char* key) {
  const auto it = file.find(key);
  if (it == file.end() || !it->is_number() || it->get<double>() < 1) return std::nullopt;
  return static_cast<int64_t>(it->get<double>());
}

const nlohmann::json* at(const nlohmann::json& j, const char* section, const char* key) {
  const auto s = j.find(section);
  if (s == j.end() || !s->is_object()) return nullptr;
  const auto k = s->find(key);
  return k == s->end() ? nullptr : &*k;
}

bool literally_true(const nlohmann::json& j, const char* section) {
  const nlohmann::json* v = at(j, section, "enabled");
  return v && v->is_boolean() && v->get<bool>();
}

}  // namespace

std::optional<std::filesystem::path> real_corpus_dir() {
  // fixtures_dir() is <source>/tests/fixtures, possibly relative to the working directory.
  const std::filesystem::path source =
      std::filesystem::weakly_canonical(std::filesystem::absolute(fixtures_dir()))
          .parent_path()
          .parent_path();
  const std::filesystem::path dir = source.parent_path() / "shared" / "ds-configs-real";
  if (!std::filesystem::exists(dir / "EXPECT.tsv")) return std::nullopt;
  return dir;
}

std::vector<RealExpectation> read_real_expectations(const std::filesystem::path& dir) {
  std::ifstream in(dir / "EXPECT.tsv");
  if (!in) throw std::runtime_error("cannot read " + (dir / "EXPECT.tsv").string());
  std::vector<RealExpectation> rows;
  std::string line, last_reason;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    std::vector<std::string> cells;
    std::stringstream ss(line);
    for (std::string cell; std::getline(ss, cell, '\t');)
      cells.push_back(cell);
    if (cells.size() < 2 || (cells[1] != "accept" && cells[1] != "refuse"))
      throw std::runtime_error("EXPECT.tsv: bad row: " + line);
    RealExpectation e{cells[0], cells[1] == "accept", cells.size() > 2 ? cells[2] : ""};
    // "as above": the reason of the last refusal before it.
    if (e.reason == "as above") e.reason = last_reason;
    if (!e.accept) last_reason = e.reason;
    rows.push_back(std::move(e));
  }
  return rows;
}

config::ConfigOverrides trainer_overrides(const nlohmann::json& file) {
  config::ConfigOverrides o;
  const auto train = positive_number(file, "train_batch_size");
  const auto micro = positive_number(file, "train_micro_batch_size_per_gpu");
  const auto accum = positive_number(file, "gradient_accumulation_steps");
  o.world_size = 4;
  if (train && micro && accum) {
    if (*train % (*micro * *accum) == 0) o.world_size = *train / (*micro * *accum);
  } else if (train) {
    const int64_t per_rank = micro ? *micro : accum ? *accum : 1;
    for (int64_t w : {4, 1, 2, 8})
      if (*train % (per_rank * w) == 0) {
        o.world_size = w;
        break;
      }
  }
  o.grad_accum = accum ? *accum : (train && micro) ? *train / (o.world_size * *micro) : 1;
  o.micro_batch = micro ? *micro : train ? *train / (o.world_size * *o.grad_accum) : 2;
  if (!file.contains("train_batch_size") && !file.contains("train_micro_batch_size_per_gpu"))
    o.given.insert("--micro-batch");
  o.hidden_size = 64;
  o.lr = 1e-4;
  if (const nlohmann::json* p = at(file, "optimizer", "params"); p && p->is_object())
    if (const auto lr = p->find("lr"); lr != p->end() && lr->is_number()) o.lr = lr->get<double>();
  o.beta1 = 0.9;
  o.beta2 = 0.999;
  o.eps = 1e-8;
  o.weight_decay = 0.0;
  o.clip = 1.0;
  o.warmup_steps = 10;
  o.total_steps = 100;
  o.dtype = literally_true(file, "fp16") ? "fp16" : "bf16";
  return o;
}

RefusalRule refusal_rule(const std::string& reason) {
  struct Rule {
    const char* needle;  // in the reason, lower case
    std::vector<std::string> words;
    bool too;
  };
  // The first rule whose needle the reason contains applies.
  static const std::vector<Rule> rules = {
      {"min_loss_scale", {"min_loss_scale"}, true},
      {"opt_level", {"opt_level"}, true},
      {"compile.disable", {"compile."}, true},
      {"bf16", {"bf16."}, true},
      {"1-bit adam", {"onebitadam"}, false},
      {"1-bit lamb", {"onebitlamb"}, false},
      {"0/1 adam", {"zerooneadam"}, false},
      {"deepcompile", {"compile", "sequence_parallel"}, false},
      {"compression", {"compression_training"}, false},
      {"pipeline", {"pipeline"}, false},
      {"zenflow", {"zenflow"}, false},
      {"autotuning", {"autotuning"}, false},
      {"torch_autocast", {"torch_autocast"}, false},
      {"progressive layer drop", {"progressive_layer_drop"}, false},
      {"sparse attention", {"sparse_attention"}, false},
      {"random-ltd", {"data_efficiency"}, false},
      {"tensor parallel", {"tensor_parallel"}, false},
      {"tensor_parallel", {"tensor_parallel"}, false},
      {"eigenvalue", {"eigenvalue", "quantize_training"}, false},
      {"curriculum learning", {"curriculum_learning"}, false},
  };
  const std::string r = lower(reason);
  for (const Rule& rule : rules)
    if (r.find(rule.needle) != std::string::npos) return {rule.words, rule.too};
  return {};
}

}  // namespace zt::test
