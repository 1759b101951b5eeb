// Where a run's checkpoints live: `<out>/checkpoints/<tag>/` (tag "step-00000120"), `latest` naming
// the newest complete one, saves in progress under "<tag>.partial-<run id>" and a replaced
// checkpoint under "<tag>.old-<run id>" until its successor is in place. Finding a checkpoint from
// what a user passes (a checkpoint, a checkpoints directory or a run's --out), and pruning to the
// newest K. Tested by tests/checkpoint/test_checkpoint_files.cpp (CheckpointStore.*) and the crash
// harness (tests/checkpoint/checkpoint_cli.py).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace zt::checkpoint {

inline constexpr const char* kCheckpointsDirName = "checkpoints";
inline constexpr const char* kLatestName = "latest";

std::string tag_for_step(int64_t step);  // "step-00000120"

struct StoredCheckpoint {
  std::filesystem::path dir;
  int64_t step = 0;
};

// Complete checkpoints (COMPLETE and manifest.json present) directly under `root`, oldest first.
std::vector<StoredCheckpoint> complete_checkpoints(const std::filesystem::path& root);

// The checkpoint `root`/latest names when it is complete; otherwise (a save killed between its
// rename and `latest`) the newest complete one, with `note` saying so. nullopt: none.
std::optional<std::filesystem::path> latest_checkpoint(const std::filesystem::path& root,
                                                       std::string* note = nullptr);

// A complete checkpoint from what a user passes: a checkpoint directory, a checkpoints directory
// (its latest) or a run's --out (its checkpoints/ latest). Throws ValueError in one line naming
// the path and what it holds (an unfinished save, the old single-process format, nothing).
std::filesystem::path resolve_checkpoint(const std::filesystem::path& given,
                                         std::string* note = nullptr);

// Removes the complete checkpoints under `root` but the newest `keep` (never `keep_dir`), and the
// leftovers of other runs' saves that did not finish ("<tag>.partial-<id>", "<tag>.old-<id>" with
// an id other than `run_id`: this run's next save may already be under way on other ranks).
// Returns the directories removed.
std::vector<std::filesystem::path> prune_checkpoints(const std::filesystem::path& root, int keep,
                                                     const std::filesystem::path& keep_dir,
                                                     const std::string& run_id);

}  // namespace zt::checkpoint
