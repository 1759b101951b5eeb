// DataLoader: step bookkeeping over the sampler's order and the copy of token windows into batches.
#include "zerotrain/data/data_loader.h"

#include <nlohmann/json.hpp>

#include "zerotrain/core/json_util.h"
#include "zerotrain/data/batch_rows.h"

namespace zt::data {
namespace {

uint64_t count_sequences(const TokenFile& tokens, int64_t seq_len) {
  return tokens.size() < 2 ? 0 : (tokens.size() - 1) / static_cast<uint64_t>(seq_len);
}

void check_config(const TokenFile* tokens, const DataLoaderConfig& c) {
  if (!tokens) throw ValueError("data_loader", "no token file");
  if (c.seq_len <= 0)
    throw ValueError("data_loader", str("seq_len must be positive, got ", c.seq_len));
  if (c.micro_batch <= 0)
    throw ValueError("data_loader", str("micro_batch must be positive, got ", c.micro_batch));
  if (c.world <= 0 || c.rank < 0 || c.rank >= c.world)
    throw ValueError("data_loader", str("rank ", c.rank, " is not in a world of ", c.world));
  if (!c.packing && !tokens->has_flags())
    throw ValueError("data_loader",
                     str(tokens->path().string(), " is a version ", tokens->header().version,
                         " token file without document boundaries: one example per row "
                         "(packing off) needs a version 2 file, as `zerotrain data prepare` "
                         "writes for chat and prompt/completion data"));
}

// Padded layout: the documents; packed: the windows of the stream.
SequenceSampler make_sampler(const TokenFile& tokens, const DataLoaderConfig& c,
                             const std::vector<uint64_t>& document_offsets) {
  const uint64_t n =
      c.packing ? count_sequences(tokens, c.seq_len) : document_offsets.size() - 1;
  const auto world = static_cast<uint64_t>(c.world);
  const uint64_t step = static_cast<uint64_t>(c.micro_batch) * world;
  if (n < world || (c.drop_last && n < step))
    throw ValueError("data_loader",
                     str(tokens.path().string(), " has ", tokens.size(), " tokens: ", n,
                         c.packing ? " sequences of seq_len " : " documents (packing off, seq_len ",
                         c.seq_len, c.packing ? " + 1" : ")", ", fewer than one step of ",
                         c.drop_last ? step : world, " (micro_batch ", c.micro_batch, " x world ",
                         c.world, c.drop_last ? ", drop_last" : "", ")"));
  return SequenceSampler(n, c.seed, c.shuffle);
}

uint64_t json_count(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number_unsigned())
    throw ValueError("data_loader", str("state.", key, ": expected a non-negative integer, got ",
                                        it == j.end() ? std::string("nothing") : it->dump()));
  return it->get<uint64_t>();
}

}  // namespace

nlohmann::json to_json(const DataLoaderState& s) {
  nlohmann::json j = {{"epoch", s.epoch}, {"next_index", s.next_index}};
  if (s.padded_rows) j["padded_rows"] = true;
  return j;
}

DataLoaderState data_loader_state_from_json(const nlohmann::json& j) {
  if (!j.is_object())
    throw ValueError("data_loader", str("state: expected an object, got ", describe_json(j)));
  DataLoaderState s{json_count(j, "epoch"), json_count(j, "next_index")};
  if (auto it = j.find("padded_rows"); it != j.end()) {
    if (!it->is_boolean())
      throw ValueError("data_loader",
                       str("state.padded_rows: expected true or false, got ", describe_json(*it)));
    s.padded_rows = it->get<bool>();
  }
  return s;
}

DataLoader::DataLoader(std::shared_ptr<const TokenFile> tokens, const DataLoaderConfig& config,
                       DataLoaderState state)
    : tokens_(std::move(tokens)),
      config_((check_config(tokens_.get(), config), config)),
      document_offsets_(config.packing ? std::vector<uint64_t>{} : document_offsets(*tokens_)),
      sampler_(make_sampler(*tokens_, config, document_offsets_)) {
  for (size_t d = 0; d + 1 < document_offsets_.size(); ++d)
    if (document_offsets_[d + 1] - document_offsets_[d] > static_cast<uint64_t>(config.seq_len) + 1)
      ++examples_cut_;
  restore(state);
}

int64_t DataLoader::rows_at(uint64_t next_index) const {
  const uint64_t n = sampler_.size();
  const auto world = static_cast<uint64_t>(config_.world);
  const uint64_t remaining = next_index < n ? n - next_index : 0;
  const auto full = static_cast<uint64_t>(config_.micro_batch);
  if (remaining >= full * world) return config_.micro_batch;
  if (config_.drop_last) return 0;
  return static_cast<int64_t>(remaining / world);
}

uint64_t DataLoader::steps_per_epoch() const {
  uint64_t steps = 0;
  const auto world = static_cast<uint64_t>(config_.world);
  for (uint64_t pos = 0;;) {
    const int64_t rows = rows_at(pos);
    if (rows == 0) return steps;
    ++steps;
    pos += static_cast<uint64_t>(rows) * world;
  }
}

void DataLoader::restore(const DataLoaderState& state) {
  const bool padded = !config_.packing;
  if (state.next_index != 0 && state.padded_rows != padded)
    throw ValueError("data_loader",
                     str("state.next_index ", state.next_index, " counts ",
                         state.padded_rows ? "documents (packing off)" : "windows (packing on)",
                         " but this loader ", padded ? "pads one document per row (packing off)"
                                                     : "packs windows (packing on)"));
  if (state.next_index > sampler_.size())
    throw ValueError("data_loader",
                     str("state.next_index ", state.next_index, " is past the end of an epoch of ",
                         sampler_.size(), " sequences"));
  // A position with no step left in its epoch (possible after a change of world or micro_batch)
  // is the start of the next epoch.
  state_ = rows_at(state.next_index) == 0 ? DataLoaderState{state.epoch + 1, 0} : state;
  state_.padded_rows = padded;
}

uint64_t DataLoader::sequence_for(const DataLoaderState& state, int rank, int64_t row) const {
  const uint64_t position = state.next_index + static_cast<uint64_t>(row) * config_.world + rank;
  return sampler_.sequence_at(state.epoch, position);
}

Batch DataLoader::next() {
  const int64_t rows = rows_at(state_.next_index);
  const int64_t S = config_.seq_len;
  Batch b;
  b.rows = rows;
  b.epoch = state_.epoch;
  b.first_index = state_.next_index;
  b.inputs = Tensor::empty({rows, S}, DType::i32);
  b.targets = Tensor::empty({rows, S}, DType::i32);
  if (config_.packing && tokens_->has_flags()) b.doc_starts = Tensor::empty({rows, S}, DType::i32);
  for (int64_t r = 0; r < rows; ++r)
    fill_row(sequence_for(state_, config_.rank, r), r, b);
  state_.next_index += static_cast<uint64_t>(rows) * static_cast<uint64_t>(config_.world);
  if (rows_at(state_.next_index) == 0) state_ = {state_.epoch + 1, 0, state_.padded_rows};
  return b;
}

void DataLoader::fill_row(uint64_t sequence, int64_t row, Batch& b) const {
  const int64_t S = config_.seq_len;
  int32_t* inputs = b.inputs.data_as<int32_t>() + row * S;
  int32_t* targets = b.targets.data_as<int32_t>() + row * S;
  if (config_.packing) {
    int32_t* starts = b.doc_starts.defined() ? b.doc_starts.data_as<int32_t>() + row * S : nullptr;
    fill_packed_row(*tokens_, sequence * static_cast<uint64_t>(S), S, inputs, targets, starts);
    return;
  }
  const auto pad = static_cast<int32_t>(tokens_->header().eos_id.value_or(0));
  fill_padded_row(*tokens_, document_offsets_[sequence], document_offsets_[sequence + 1], S, pad,
                  inputs, targets);
}

}  // namespace zt::data
