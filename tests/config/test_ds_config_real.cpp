// Conformance over the public corpus of real DeepSpeed configs (real_corpus.h): checked as a
// Hugging Face Trainer user runs them, through `zerotrain config check`'s code path
// (config::load_ds_config, with values only where a file says "auto"), every file EXPECT.tsv
// marks "accept" loads, and every "refuse" file fails with one "[config] ..." line naming the
// feature (and, where DeepSpeed 0.19.6 refuses the file too, saying so); what config check prints
// for an accepted file loads again to the same values. Prints the counts.
// Skips, saying why, when ../shared/ds-configs-real is absent.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <iostream>
#include <string>

#include "config/real_corpus.h"
#include "zerotrain/config/load.h"
#include "zerotrain/core/error.h"
#include "zerotrain/core/files.h"
#include "zerotrain/core/json_util.h"

namespace zt::test {
namespace {

// Files where zerotrain deliberately parts from EXPECT.tsv, each with the reason.
struct Difference {
  const char* file;
  const char* message_word;  // the refusal names this key
  const char* why;
};
const Difference kDifferences[] = {
    {"Megatron-DeepSpeed__examples_deepspeed_curriculum_learning_ds_zero_stage_1_config_baseline."
     "json",
     "optimizer.params.max_grad_norm",
     "Megatron hands DeepSpeed its own optimizer, so DeepSpeed never checks the section's params; "
     "zerotrain builds the optimizer from the section, where DeepSpeed 0.19.6 raises on "
     "max_grad_norm"},
};

const Difference* difference_for(const std::string& file) {
  for (const Difference& d : kDifferences)
    if (file == d.file) return &d;
  return nullptr;
}

std::string lower(std::string s) {
  for (char& c : s)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

TEST(DsConfigReal, EveryFileAsDeepSpeedDecides) {
  const auto dir = real_corpus_dir();
  if (!dir)
    GTEST_SKIP() << "no corpus of real DeepSpeed configs at ../shared/ds-configs-real beside the "
                    "source tree (set ZT_SOURCE_DIR to the tree that has it)";
  const std::vector<RealExpectation> rows = read_real_expectations(*dir);
  ASSERT_GE(rows.size(), 150u) << "EXPECT.tsv looks truncated";
  int accepted = 0, refused = 0, expect_accept = 0, expect_refuse = 0;
  for (const RealExpectation& row : rows) {
    SCOPED_TRACE(row.file);
    (row.accept ? expect_accept : expect_refuse) += 1;
    const std::filesystem::path path = *dir / row.file;
    const nlohmann::json file = parse_json(read_text_file(path, "test"), "test", path.string());
    std::string error;
    const config::ConfigOverrides overrides = trainer_overrides(file);
    try {
      const config::LoadedConfig loaded = config::load_ds_config(path, overrides);
      ++accepted;
      // What `config check` prints is itself a ds_config that resolves to the same values.
      const std::string printed = config::ds_config_json(loaded.config);
      config::ConfigOverrides world_only;
      world_only.world_size = overrides.world_size;
      EXPECT_EQ(
          config::ds_config_json(config::parse_ds_config(printed, "printed", world_only).config),
          printed);
    } catch (const Error& e) {
      error = e.what();
      ++refused;
    }
    if (!error.empty()) {
      EXPECT_TRUE(error.starts_with("[config] ")) << error;
      EXPECT_EQ(error.find('\n'), std::string::npos) << error;
    }
    if (const Difference* d = difference_for(row.file)) {
      EXPECT_NE(error.find(d->message_word), std::string::npos)
          << "expected the deliberate refusal naming " << d->message_word << " (" << d->why
          << "), got: " << (error.empty() ? "accepted" : error);
      continue;
    }
    if (row.accept) {
      EXPECT_TRUE(error.empty()) << "DeepSpeed 0.19.6 runs this file; zerotrain: " << error;
      continue;
    }
    if (error.empty()) {
      ADD_FAILURE() << "accepted, but it needs " << row.reason;
      continue;
    }
    const RefusalRule rule = refusal_rule(row.reason);
    if (rule.words.empty()) {
      ADD_FAILURE() << "no rule names the feature of \"" << row.reason
                    << "\" (add one to refusal_rule in real_corpus.cpp)";
      continue;
    }
    const std::string message = lower(error);
    EXPECT_TRUE(
        std::any_of(rule.words.begin(), rule.words.end(),
                    [&](const std::string& w) { return message.find(w) != std::string::npos; }))
        << "the refusal does not name the feature (" << row.reason << "): " << error;
    if (rule.deepspeed_refuses_too) {
      EXPECT_NE(message.find("refuses this too"), std::string::npos)
          << "the refusal does not say DeepSpeed refuses it too: " << error;
    }
  }
  std::cout << "[ds-configs-real] accepted " << accepted << " (EXPECT accept " << expect_accept
            << "), refused " << refused << " (EXPECT refuse " << expect_refuse << "), "
            << std::size(kDifferences) << " deliberate difference(s)\n";
}

}  // namespace
}  // namespace zt::test
