// plan_shards and write_sharded_safetensors (see sharded_safetensors.h).
#include <cctype>
#include <cstdio>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "zerotrain/core/io_error.h"
#include "zerotrain/io/sharded_safetensors.h"

namespace zt::io {

namespace {
constexpr std::string_view kComponent = "safetensors";

// "model-<5+ digits>-of-<5+ digits>.safetensors": the names this writer (and transformers) give
// shards, the only files a later save may remove.
bool is_shard_file_name(const std::string& name) {
  auto digits = [&](size_t& i) {
    const size_t start = i;
    while (i < name.size() && std::isdigit(static_cast<unsigned char>(name[i])))
      ++i;
    return i - start >= 5;
  };
  auto literal = [&](size_t& i, std::string_view s) {
    if (name.compare(i, s.size(), s) != 0) return false;
    i += s.size();
    return true;
  };
  size_t i = 0;
  return literal(i, "model-") && digits(i) && literal(i, "-of-") && digits(i) &&
         literal(i, ".safetensors") && i == name.size();
}

void remove_stale(const std::filesystem::path& dir, const std::set<std::string>& keep) {
  for (const auto& de : std::filesystem::directory_iterator(dir)) {
    const std::string name = de.path().filename().string();
    const bool weights =
        name == kWeightsFile || name == kWeightsIndexFile || is_shard_file_name(name);
    if (weights && de.is_regular_file() && keep.count(name) == 0) {
      std::error_code ec;
      std::filesystem::remove(de.path(), ec);
      if (ec)
        throw IoError(kComponent,
                      str("cannot remove stale ", de.path().string(), ": ", ec.message()));
    }
  }
}
}  // namespace

ShardPlan plan_shards(const std::vector<uint64_t>& nbytes, uint64_t max_shard_bytes) {
  if (max_shard_bytes == 0) throw ValueError(kComponent, "max_shard_bytes must be positive");
  ShardPlan plan;
  std::vector<size_t> current;
  uint64_t current_size = 0;
  for (size_t i = 0; i < nbytes.size(); ++i) {
    plan.total_size += nbytes[i];
    if (nbytes[i] > max_shard_bytes) {
      plan.shards.push_back({i});
      continue;
    }
    if (current_size + nbytes[i] > max_shard_bytes) {
      plan.shards.push_back(std::move(current));
      current.clear();
      current_size = 0;
    }
    current.push_back(i);
    current_size += nbytes[i];
  }
  if (!current.empty()) plan.shards.push_back(std::move(current));
  return plan;
}

std::string shard_file_name(size_t index, size_t count) {
  if (count == 1) return kWeightsFile;
  char buf[64];
  std::snprintf(buf, sizeof(buf), "model-%05zu-of-%05zu.safetensors", index + 1, count);
  return buf;
}

std::vector<std::string> write_sharded_safetensors(const std::filesystem::path& dir,
                                                   const std::vector<NamedTensor>& tensors,
                                                   uint64_t max_shard_bytes,
                                                   const SafetensorsWriteOptions& options) {
  std::vector<uint64_t> sizes;
  uint64_t total_parameters = 0;
  std::set<std::string_view> seen;
  for (const NamedTensor& nt : tensors) {
    if (!nt.defined())
      throw ValueError(kComponent, str(dir.string(), ": tensor \"", nt.name, "\" is undefined"));
    if (!seen.insert(nt.name).second)
      throw ValueError(kComponent, str(dir.string(), ": tensor \"", nt.name, "\" given twice"));
    sizes.push_back(stored_nbytes(nt, options));
    total_parameters += static_cast<uint64_t>(numel_of(nt.shape_of()));
  }
  ShardPlan plan = plan_shards(sizes, max_shard_bytes);
  if (plan.shards.empty()) plan.shards.emplace_back();  // no tensors: one empty file
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec)
    throw IoError(kComponent, str("cannot create directory ", dir.string(), ": ", ec.message()));

  const size_t n = plan.shards.size();
  std::vector<std::string> written;
  std::map<std::string, std::string> weight_map;
  for (size_t s = 0; s < n; ++s) {
    const std::string file = shard_file_name(s, n);
    std::vector<NamedTensor> part;
    for (size_t i : plan.shards[s]) {
      part.push_back(tensors[i]);
      weight_map[tensors[i].name] = file;
    }
    write_safetensors(dir / file, part, options);
    written.push_back(file);
  }
  std::set<std::string> keep(written.begin(), written.end());
  if (n > 1) {
    nlohmann::json index;
    index["metadata"] = {{"total_parameters", total_parameters}, {"total_size", plan.total_size}};
    index["weight_map"] = weight_map;
    write_file_atomic(dir / kWeightsIndexFile, index.dump(2) + "\n");
    keep.insert(kWeightsIndexFile);
  }
  remove_stale(dir, keep);
  return written;
}

}  // namespace zt::io
