// Saving a sharded checkpoint, every rank its own shard ([Note: sharded checkpoint format] in
// manifest.h), synchronously or in the background.
//
// [Note: checkpoint save protocol]
// 1. Every rank hands its shard to save() as host copies (RankShard): training waits only for
//    the device-to-host copy. With `async` the rest runs on a background thread.
// 2. Every rank writes its file and then its marker into "<root>/<tag>.partial-<run id>/" (a
//    failed write leaves "rank-NNNNN.failed" with the reason, so rank 0 stops waiting); rank 0
//    also writes the gathered Hugging Face weights when it was given them.
// 3. Rank 0 waits for every marker, writes manifest.json, then COMPLETE, then renames the
//    directory to "<root>/<tag>" (an older checkpoint of that tag is first renamed aside to
//    "<tag>.old-<run id>"), then rewrites `latest` atomically, then removes the replaced one and
//    prunes to the newest `keep`.
// At no moment does `latest` (or, failing it, the newest complete directory, checkpoint_store.h)
// name anything but a complete checkpoint; a killed save leaves only a ".partial-" directory,
// removed by the next run's first save. A save still running when the next is due, or at the
// end, is waited for; its failure is thrown then, and `latest` never names it.
// Tested by tests/checkpoint/test_checkpoint_files.cpp and tests/checkpoint/checkpoint_cli.py.
#pragma once

#include <chrono>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>

#include "zerotrain/checkpoint/gathered_weights.h"
#include "zerotrain/checkpoint/manifest.h"
#include "zerotrain/checkpoint/shard_file.h"

namespace zt::checkpoint {

struct SaveTarget {
  std::filesystem::path root;  // <out>/checkpoints
  int rank = 0, world = 1;
  std::string run_id;  // the same on every rank of one run, different between runs
  int keep = 2;        // complete checkpoints kept (>= 1)
  bool async = false;
  std::chrono::seconds rank_timeout{1800};  // rank 0's wait for the other ranks' markers
};

class CheckpointSaver {
 public:
  explicit CheckpointSaver(SaveTarget target);
  ~CheckpointSaver();  // waits for a save in flight (its failure is dropped: call wait() first)
  CheckpointSaver(const CheckpointSaver&) = delete;
  CheckpointSaver& operator=(const CheckpointSaver&) = delete;

  // Saves `shard` as tag_for_step(header.step); `header`: the manifest without its files (rank 0's
  // is written); `weights`: the model's gathered weights, written by the rank that kept them
  // (rank 0) into the checkpoint's "model/" (none when empty). Waits for the previous save first, throwing its failure; returns the seconds
  // that wait took (0 when the previous save was done).
  double save(RankShard shard, Manifest header, GatheredWeights weights = {});
  // Waits for the save in flight; throws its failure (one line naming the checkpoint).
  void wait();
  // Makes the host buffers of a shard of these pieces in the background (RankShard::with_buffers),
  // for the first save to reuse: pinning a GPU shard's worth of host memory takes seconds that
  // training would otherwise wait for at that save. Call before the first save.
  void prepare_buffers(std::vector<PieceSpec> specs);
  // An empty shard for the next save holding the host buffers of the last save
  // (RankShard::reuse_buffers), after waiting for that save to finish (throwing its failure);
  // `waited` gets the seconds of that wait. The saver keeps those buffers between saves: one
  // shard of host memory per rank stays mapped.
  RankShard next_shard(double& waited);
  // Rank 0: the directory of the newest save that completed; empty before one did.
  std::filesystem::path last_saved() const;
  // This rank's saves that finished: their shard bytes and the seconds spent writing them (file,
  // fsync, marker; rank 0 also the manifest and `latest`), in the background when async.
  struct Written {
    int saves = 0;
    uint64_t bytes = 0;
    double seconds = 0;
  };
  Written written() const;

 private:
  void run(RankShard& shard, Manifest header, const GatheredWeights& weights);
  void finish_as_rank0(const std::filesystem::path& work, Manifest header);

  SaveTarget target_;
  std::thread worker_;
  std::exception_ptr failure_;
  mutable std::mutex mu_;
  std::filesystem::path last_saved_;
  Written written_;
  RankShard finished_;  // the last finished save's shard, for next_shard
};

}  // namespace zt::checkpoint
