// DataLoader: step bookkeeping over the sampler's order and the copy of token windows into batches.
#include "zerotrain/data/data_loader.h"

#include <nlohmann/json.hpp>

#include "zerotrain/core/json_util.h"

namespace zt::data {
namespace {

uint64_t count_sequences(const TokenFile& tokens, int64_t seq_len) {
  return tokens.size() < 2 ? 0 : (tokens.size() - 1) / static_cast<uint64_t>(seq_len);
}

SequenceSampler make_sampler(const TokenFile* tokens, const DataLoaderConfig& c) {
  if (!tokens) throw ValueError("data_loader", "no token file");
  if (c.seq_len <= 0)
    throw ValueError("data_loader", str("seq_len must be positive, got ", c.seq_len));
  if (c.micro_batch <= 0)
    throw ValueError("data_loader", str("micro_batch must be positive, got ", c.micro_batch));
  if (c.world <= 0 || c.rank < 0 || c.rank >= c.world)
    throw ValueError("data_loader", str("rank ", c.rank, " is not in a world of ", c.world));
  const uint64_t n = count_sequences(*tokens, c.seq_len);
  const auto world = static_cast<uint64_t>(c.world);
  const uint64_t step = static_cast<uint64_t>(c.micro_batch) * world;
  if (n < world || (c.drop_last && n < step))
    throw ValueError("data_loader",
                     str(tokens->path().string(), " has ", tokens->size(), " tokens: ", n,
                         " sequences of seq_len ", c.seq_len, " + 1, fewer than one step of ",
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
  return {{"epoch", s.epoch}, {"next_index", s.next_index}};
}

DataLoaderState data_loader_state_from_json(const nlohmann::json& j) {
  if (!j.is_object())
    throw ValueError("data_loader", str("state: expected an object, got ", describe_json(j)));
  return {json_count(j, "epoch"), json_count(j, "next_index")};
}

DataLoader::DataLoader(std::shared_ptr<const TokenFile> tokens, const DataLoaderConfig& config,
                       DataLoaderState state)
    : tokens_(std::move(tokens)), config_(config), sampler_(make_sampler(tokens_.get(), config)) {
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
  if (state.next_index > sampler_.size())
    throw ValueError("data_loader",
                     str("state.next_index ", state.next_index, " is past the end of an epoch of ",
                         sampler_.size(), " sequences"));
  // A position with no step left in its epoch (possible after a change of world or micro_batch)
  // is the start of the next epoch.
  state_ = rows_at(state.next_index) == 0 ? DataLoaderState{state.epoch + 1, 0} : state;
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
  auto* in = b.inputs.data_as<int32_t>();
  auto* tg = b.targets.data_as<int32_t>();
  std::vector<int32_t> window(static_cast<size_t>(S) + 1);
  for (int64_t r = 0; r < rows; ++r) {
    const uint64_t seq = sequence_for(state_, config_.rank, r);
    tokens_->read(seq * static_cast<uint64_t>(S), static_cast<uint64_t>(S) + 1, window.data());
    std::copy(window.begin(), window.end() - 1, in + r * S);
    std::copy(window.begin() + 1, window.end(), tg + r * S);
  }
  state_.next_index += static_cast<uint64_t>(rows) * static_cast<uint64_t>(config_.world);
  if (rows_at(state_.next_index) == 0) state_ = {state_.epoch + 1, 0};
  return b;
}

}  // namespace zt::data
