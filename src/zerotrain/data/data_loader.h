// Training batches from a token file. The stream is cut into sequences of S+1 tokens that overlap
// by one (sequence i covers tokens [i*S, i*S + S + 1)); inputs are the first S tokens, targets the
// last S. Each epoch visits the sequences in the order of a SequenceSampler (a permutation keyed by
// (seed, epoch)). A step consumes micro_batch x world positions of that order; rank r takes
// positions next + r, next + r + world, ... (every world-th sequence), so the ranks' shards are
// disjoint and together cover the step. The state {epoch, next_index} is the same on every rank and
// is all a checkpoint needs: a loader restored from it yields exactly the batches that would have
// come next (with the same token file, seq_len, seed and shuffle; world and micro_batch may
// change).
//
// Rows come in one of two layouts (DataLoaderConfig::packing, `zerotrain train --packing`):
//  - packed (the default): the windows above. From a version 2 token file (token_file.h, [Note:
//    token flags]) targets that do not count are -100, and doc_starts marks where each position's
//    document starts in the row, so examples packed into one row do not see each other. A version
//    1 file gives the same batches as ever: every target counts and doc_starts is empty.
//  - padded: one document (example) per row, from its start, inputs padded with the eos id (or 0)
//    and targets with -100; a document longer than S + 1 tokens is cut there (examples_cut()
//    counts them). The sampler then orders documents instead of windows. Needs a version 2 file.
//    doc_starts is empty: each row holds one document from position 0.
// A position saved in one layout cannot resume the other (except at the start of an epoch); the
// state records the padded layout so that restore() refuses it.
//
// At the end of an epoch, fewer than micro_batch x world positions may remain. With drop_last they
// are skipped; otherwise every rank gets one last, shorter batch of floor(remaining / world) rows
// (the last remaining % world positions are skipped so that all ranks stay in step).
// Tested in tests/data/test_data_loader.cpp.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>
#include <nlohmann/json_fwd.hpp>

#include "zerotrain/core/tensor.h"
#include "zerotrain/data/sequence_sampler.h"
#include "zerotrain/data/token_file.h"

namespace zt::data {

struct DataLoaderConfig {
  int64_t seq_len = 0;      // S: tokens per input row
  int64_t micro_batch = 0;  // B: rows per rank per step
  int rank = 0;
  int world = 1;
  uint64_t seed = 0;
  bool shuffle = true;
  bool drop_last = true;
  bool packing = true;  // false: one example per row, padded (see above)
};

struct DataLoaderState {
  uint64_t epoch = 0;
  uint64_t next_index = 0;  // position in the epoch's order where the next step starts (all ranks)
  bool padded_rows = false;  // next_index counts documents (packing off), not windows
  bool operator==(const DataLoaderState&) const = default;
};

// {"epoch", "next_index"}, and "padded_rows": true only in the padded layout (so the state of a
// packed run reads as it always has).
nlohmann::json to_json(const DataLoaderState& s);
// Throws ValueError naming the key when a field is missing or not a non-negative integer.
DataLoaderState data_loader_state_from_json(const nlohmann::json& j);

struct Batch {
  Tensor inputs;   // [rows, S] i32, on the CPU
  Tensor targets;  // [rows, S] i32, on the CPU: inputs shifted left by one token; -100 (the loss's
                   // ignore index, as labels in transformers) where the target is masked out of
                   // the loss
  // [rows, S] i32 on the CPU, or empty when every row is one unbroken stream: for each position,
  // the position in the row where its document starts. Attention does not look before it, and
  // position ids count from it.
  Tensor doc_starts;
  int64_t rows = 0;  // micro_batch, or fewer for the last batch of an epoch without drop_last
  uint64_t epoch = 0;
  uint64_t first_index = 0;  // the step's next_index when it started
};

class DataLoader {
 public:
  DataLoader(std::shared_ptr<const TokenFile> tokens, const DataLoaderConfig& config,
             DataLoaderState state = {});

  // The next batch of this rank; rolls over into the next epoch when the current one is done.
  Batch next();

  const DataLoaderState& state() const { return state_; }
  void restore(const DataLoaderState& state);

  // Rows in one epoch: windows when packing, documents when padded.
  uint64_t sequences_per_epoch() const { return sampler_.size(); }
  // Padded layout: documents longer than seq_len + 1 tokens, cut to fit a row (0 when packing).
  uint64_t examples_cut() const { return examples_cut_; }
  // Steps in one epoch (the same on every rank).
  uint64_t steps_per_epoch() const;
  // The sequence index that rank `rank` reads as row `row` of the step starting at `state`.
  uint64_t sequence_for(const DataLoaderState& state, int rank, int64_t row) const;
  const DataLoaderConfig& config() const { return config_; }

 private:
  // Rows per rank of the step that starts at next_index (0: the epoch has no further step).
  int64_t rows_at(uint64_t next_index) const;

  void fill_row(uint64_t sequence, int64_t row, Batch& b) const;

  std::shared_ptr<const TokenFile> tokens_;
  DataLoaderConfig config_;
  std::vector<uint64_t> document_offsets_;  // padded layout: num_documents + 1 token offsets
  uint64_t examples_cut_ = 0;
  SequenceSampler sampler_;
  DataLoaderState state_;
};

}  // namespace zt::data
