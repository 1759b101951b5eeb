// See checkpoint_store.h.
#include "zerotrain/checkpoint/checkpoint_store.h"

#include <algorithm>
#include <cstdio>

#include "zerotrain/checkpoint/fault_injection.h"
#include "zerotrain/checkpoint/manifest.h"
#include "zerotrain/core/error.h"
#include "zerotrain/core/files.h"

namespace zt::checkpoint {

namespace fs = std::filesystem;

namespace {

constexpr const char* kComponent = "checkpoint";
constexpr std::string_view kTagPrefix = "step-";

// The step of a tag "step-<digits>", or -1.
int64_t step_of_tag(const std::string& name) {
  if (name.size() <= kTagPrefix.size() || name.compare(0, kTagPrefix.size(), kTagPrefix) != 0)
    return -1;
  int64_t step = 0;
  for (size_t i = kTagPrefix.size(); i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9' || step > (int64_t{1} << 58)) return -1;
    step = step * 10 + (name[i] - '0');
  }
  return step;
}

bool is_complete(const fs::path& dir) {
  std::error_code ec;
  return fs::is_regular_file(dir / kCompleteName, ec) && fs::is_regular_file(dir / kManifestName, ec);
}

}  // namespace

std::string tag_for_step(int64_t step) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "step-%08lld", static_cast<long long>(step));
  return buf;
}

std::vector<StoredCheckpoint> complete_checkpoints(const fs::path& root) {
  std::vector<StoredCheckpoint> out;
  std::error_code ec;
  if (!fs::is_directory(root, ec)) return out;
  for (const fs::directory_entry& e : fs::directory_iterator(root, ec)) {
    const int64_t step = step_of_tag(e.path().filename().string());
    if (step >= 0 && e.is_directory(ec) && is_complete(e.path())) out.push_back({e.path(), step});
  }
  std::sort(out.begin(), out.end(),
            [](const StoredCheckpoint& a, const StoredCheckpoint& b) { return a.step < b.step; });
  return out;
}

std::optional<fs::path> latest_checkpoint(const fs::path& root, std::string* note) {
  std::error_code ec;
  if (fs::is_regular_file(root / kLatestName, ec)) {
    std::string tag = read_text_file(root / kLatestName, kComponent);
    while (!tag.empty() && (tag.back() == '\n' || tag.back() == '\r' || tag.back() == ' '))
      tag.pop_back();
    if (step_of_tag(tag) >= 0 && is_complete(root / tag)) return root / tag;
  }
  const std::vector<StoredCheckpoint> all = complete_checkpoints(root);
  if (all.empty()) return std::nullopt;
  if (note)
    *note = str((root / kLatestName).string(), " does not name a complete checkpoint; using the newest, ",
                all.back().dir.filename().string());
  return all.back().dir;
}

fs::path resolve_checkpoint(const fs::path& given, std::string* note) {
  std::error_code ec;
  if (!fs::exists(given, ec))
    throw ValueError(kComponent, str(given.string(), " does not exist"));
  if (fs::exists(given / kManifestName, ec) || fs::exists(given / kCompleteName, ec) ||
      step_of_tag(given.filename().string()) >= 0 ||
      given.filename().string().find(".partial-") != std::string::npos) {
    if (!fs::is_regular_file(given / kCompleteName, ec))
      throw ValueError(kComponent, str(given.string(), " is not a complete checkpoint (no ",
                                       kCompleteName, " marker: its save did not finish)"));
    if (!is_complete(given))  // COMPLETE is written after the manifest: this one was removed
      throw ValueError(kComponent, str(given.string(), " has its ", kCompleteName, " marker but no ",
                                       kManifestName, " (removed since the save?)"));
    return given;
  }
  if (fs::exists(given / "train_state.json", ec) || fs::exists(given / "checkpoint" / "train_state.json", ec))
    throw ValueError(kComponent,
                     str(given.string(), " holds a checkpoint of the old single-process format "
                                         "(checkpoint/train_state.json), which this zerotrain no "
                                         "longer reads"));
  for (const fs::path& root : {given, given / kCheckpointsDirName})
    if (fs::is_directory(root, ec) && (fs::exists(root / kLatestName, ec) || !complete_checkpoints(root).empty()))
      if (auto dir = latest_checkpoint(root, note)) return *dir;
  throw ValueError(kComponent, str(given.string(), " holds no complete checkpoint (looked for ",
                                   kManifestName, ", ", kLatestName, " and ", kCheckpointsDirName,
                                   "/)"));
}

std::vector<fs::path> prune_checkpoints(const fs::path& root, int keep, const fs::path& keep_dir,
                                        const std::string& run_id) {
  std::vector<fs::path> removed;
  const auto remove = [&](const fs::path& dir) {
    fault_point("remove old checkpoint");
    fs::remove_all(dir);
    removed.push_back(dir);
  };
  std::vector<StoredCheckpoint> all = complete_checkpoints(root);
  const int64_t excess = static_cast<int64_t>(all.size()) - std::max(keep, 1);
  for (int64_t i = 0; i < excess; ++i)
    if (all[static_cast<size_t>(i)].dir != keep_dir) remove(all[static_cast<size_t>(i)].dir);
  std::error_code ec;
  std::vector<fs::path> leftovers;
  for (const fs::directory_entry& e : fs::directory_iterator(root, ec)) {
    const std::string name = e.path().filename().string();
    const size_t dot = name.find('.');
    if (dot == std::string::npos || step_of_tag(name.substr(0, dot)) < 0) continue;
    const std::string kind = name.substr(dot, name.find('-', dot) - dot);
    const std::string id = name.substr(std::min(name.size(), name.find('-', dot) + 1));
    if ((kind == ".partial" || kind == ".old") && id != run_id) leftovers.push_back(e.path());
  }
  for (const fs::path& dir : leftovers)
    remove(dir);
  return removed;
}

}  // namespace zt::checkpoint
