// Helpers of the conformance test over the public corpus of real DeepSpeed configs
// (../shared/ds-configs-real beside the source tree: 195 files as shipped in public repositories,
// EXPECT.tsv with DeepSpeed 0.19.6's verdict on each). Used by test_ds_config_real.cpp.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "zerotrain/config/overrides.h"

namespace zt::test {

// ../shared/ds-configs-real relative to the source tree ($ZT_SOURCE_DIR when set), or nullopt
// when it is absent (the corpus is not part of the repository).
std::optional<std::filesystem::path> real_corpus_dir();

struct RealExpectation {
  std::string file;    // the config's file name
  bool accept = true;  // DeepSpeed 0.19.6 runs it, so zerotrain must accept it
  std::string reason;  // for a refusal: what it needs ("1-bit Adam"); "as above" resolved to the
                       // previous refusal's
};
// The rows of EXPECT.tsv (file, accept|refuse, reason), in order.
std::vector<RealExpectation> read_real_expectations(const std::filesystem::path& dir);

// The values a Hugging Face Trainer user gives: they fill the file's "auto" keys only (never a
// key the file sets), with the lr, batch sizes and precision the file's own numbers imply, and a
// world size for which train_batch_size = micro x accumulation x world holds (4, else 1, 2 or 8).
// A file with no batch key at all takes the micro batch from the trainer (Accelerate fills it).
config::ConfigOverrides trainer_overrides(const nlohmann::json& file);

// For a refusal reason of EXPECT.tsv, the words one of which zerotrain's message must contain
// (lower case), and whether the message must say that DeepSpeed refuses it too. Empty words:
// no rule knows the reason (a new row of EXPECT.tsv needs one).
struct RefusalRule {
  std::vector<std::string> words;
  bool deepspeed_refuses_too = false;
};
RefusalRule refusal_rule(const std::string& reason);

}  // namespace zt::test
