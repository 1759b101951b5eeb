// See checkpoint_saver.h, [Note: checkpoint save protocol].
#include "zerotrain/checkpoint/checkpoint_saver.h"

#include <utility>

#include "zerotrain/checkpoint/checkpoint_store.h"
#include "zerotrain/checkpoint/fault_injection.h"
#include "zerotrain/core/error.h"
#include "zerotrain/core/files.h"
#include "zerotrain/core/io_error.h"
#include "zerotrain/core/json_util.h"
#include "zerotrain/io/sharded_safetensors.h"

namespace zt::checkpoint {

namespace fs = std::filesystem;

namespace {

constexpr const char* kComponent = "checkpoint";

// Rank `rank`'s marker in `work`, waited for until `deadline`; throws when it reports a failure.
SavedFile await_marker(const fs::path& work, int rank, std::chrono::steady_clock::time_point deadline,
                       std::chrono::seconds timeout) {
  const fs::path marker = work / rank_marker_name(rank);
  const fs::path failed = work / rank_failure_name(rank);
  for (;;) {
    std::error_code ec;
    if (fs::exists(marker, ec)) {
      const nlohmann::json j = parse_json(read_text_file(marker, kComponent), kComponent, marker.string());
      return saved_file_from_json(j, marker.string());
    }
    if (fs::exists(failed, ec))
      throw IoError(kComponent, str("rank ", rank, " could not write its shard of ", work.string(), ": ",
                            read_text_file(failed, kComponent)));
    if (std::chrono::steady_clock::now() > deadline)
      throw IoError(kComponent, str("rank ", rank, " did not write its shard of ", work.string(),
                            " within ", timeout.count(), " s"));
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

}  // namespace

CheckpointSaver::CheckpointSaver(SaveTarget target) : target_(std::move(target)) {
  if (target_.keep < 1)
    throw ValueError(kComponent, str("--keep-checkpoints: must be >= 1, got ", target_.keep));
}

CheckpointSaver::~CheckpointSaver() {
  if (worker_.joinable()) worker_.join();
}

void CheckpointSaver::wait() {
  if (worker_.joinable()) worker_.join();
  if (failure_) std::rethrow_exception(std::exchange(failure_, nullptr));
}

void CheckpointSaver::prepare_buffers(std::vector<PieceSpec> specs) {
  wait();
  worker_ = std::thread([this, specs = std::move(specs)] {
    try {
      RankShard buffers = RankShard::with_buffers(specs);
      std::lock_guard lock(mu_);
      finished_ = std::move(buffers);
    } catch (...) {
      failure_ = std::current_exception();
    }
  });
}

RankShard CheckpointSaver::next_shard(double& waited) {
  const auto start = std::chrono::steady_clock::now();
  wait();
  waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  RankShard next;
  std::lock_guard lock(mu_);
  next.reuse_buffers(std::move(finished_));
  return next;
}

fs::path CheckpointSaver::last_saved() const {
  std::lock_guard lock(mu_);
  return last_saved_;
}

double CheckpointSaver::save(RankShard shard, Manifest header, GatheredWeights weights) {
  const auto start = std::chrono::steady_clock::now();
  wait();
  const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!target_.async) {
    run(shard, std::move(header), weights);
    return waited;
  }
  worker_ = std::thread([this, shard = std::move(shard), header = std::move(header),
                         weights = std::move(weights)]() mutable {
    try {
      run(shard, std::move(header), weights);
    } catch (...) {
      failure_ = std::current_exception();
    }
  });
  return waited;
}

CheckpointSaver::Written CheckpointSaver::written() const {
  std::lock_guard lock(mu_);
  return written_;
}

void CheckpointSaver::run(RankShard& shard, Manifest header, const GatheredWeights& weights) {
  const auto start = std::chrono::steady_clock::now();
  const std::string tag = tag_for_step(header.step);
  const fs::path work = target_.root / str(tag, ".partial-", target_.run_id);
  try {
    fault_point("create checkpoint directory");
    fs::create_directories(work);
    write_rank_file(work, target_.rank, target_.world, shard);
    if (!weights.tensors.empty()) {
      fault_point("write the model's weights");
      write_weights(weights, work / kWeightsDir, io::kDefaultMaxShardBytes);
      header.weights_dtype = weights.dtype;
    }
  } catch (const std::exception& e) {
    try {
      write_file_atomic(work / rank_failure_name(target_.rank), e.what());
    } catch (const std::exception&) {  // the failure is thrown below either way
    }
    throw ValueError(kComponent, str("saving ", tag, " failed on rank ", target_.rank, ": ", e.what()));
  }
  if (target_.rank == 0) finish_as_rank0(work, std::move(header));
  std::lock_guard lock(mu_);
  ++written_.saves;
  written_.bytes += shard.bytes() + weights.bytes();
  written_.seconds +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  finished_ = std::move(shard);
}

void CheckpointSaver::finish_as_rank0(const fs::path& work, Manifest header) {
  const std::string tag = tag_for_step(header.step);
  const auto deadline = std::chrono::steady_clock::now() + target_.rank_timeout;
  header.tag = tag;
  header.world_size = target_.world;
  header.files.clear();
  for (int r = 0; r < target_.world; ++r) {
    SavedFile f = await_marker(work, r, deadline, target_.rank_timeout);
    if (!f.tensors.empty()) header.files.push_back(std::move(f));
  }
  fault_point("write manifest");
  write_manifest(work, header);
  fault_point("write COMPLETE");
  write_file_atomic(work / kCompleteName, str("step ", header.step, "\n"));
  const fs::path final_dir = target_.root / tag;
  fs::path replaced;
  if (fs::exists(final_dir)) {
    replaced = target_.root / str(tag, ".old-", target_.run_id);
    fault_point("rename the replaced checkpoint aside");
    fs::rename(final_dir, replaced);
  }
  fault_point("rename the checkpoint into place");
  fs::rename(work, final_dir);
  fsync_directory(target_.root);
  fault_point("write latest");
  write_file_atomic(target_.root / kLatestName, tag + "\n");
  if (!replaced.empty()) {
    fault_point("remove the replaced checkpoint");
    fs::remove_all(replaced);
  }
  prune_checkpoints(target_.root, target_.keep, final_dir, target_.run_id);
  std::lock_guard lock(mu_);
  last_saved_ = final_dir;
}

}  // namespace zt::checkpoint
