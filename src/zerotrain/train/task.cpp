#include "zerotrain/train/task.h"

#include "zerotrain/core/error.h"
#include "zerotrain/nn/row_documents.h"
#include "zerotrain/train/step_batches.h"
#include "zerotrain/train/token_data.h"

namespace zt::train {

data::DataLoader CausalLmTask::open_data(const std::filesystem::path& path, const DataConfig& data,
                                         const nn::ModelConfig& model, int rank, int world,
                                         const data::DataLoaderState& state) const {
  auto tokens = open_token_file_for_model(path, model, "token file");
  data::DataLoaderConfig loader;
  loader.seq_len = data.seq_len;
  loader.micro_batch = data.micro_batch;
  loader.seed = data.seed;
  loader.rank = rank;
  loader.world = world;
  loader.packing = data.packing;
  data::DataLoader batches(tokens, loader, state);
  if (batches.steps_per_epoch() == 0)
    throw ValueError("train", str("token file ", path.string(), " (", tokens->size(),
                                  " tokens) is too small for one batch of ", data.micro_batch,
                                  " x ", data.seq_len + 1, " tokens"));
  return batches;
}

void CausalLmTask::load_micro_batch(const data::Batch& batch, nn::StepContext& ctx) const {
  ctx.tokens = batch.inputs.to(ctx.device, ctx.stream);
  ctx.targets = batch.targets.to(ctx.device, ctx.stream);
  ctx.documents = nn::row_documents(batch.doc_starts, ctx.device, ctx.stream);
}

void CausalLmTask::unload(nn::StepContext& ctx) const {
  ctx.num_items_in_batch = -1;  // the count and the documents were this step's batches' only
  ctx.documents = {};
}

int64_t CausalLmTask::loss_targets(const std::vector<data::Batch>& batches,
                                   zero::ZeroStage& engine) const {
  return global_loss_targets(batches, engine);
}

int64_t CausalLmTask::tokens_of(const data::Batch& batch, int64_t seq_len) const {
  return batch.rows * seq_len;
}

}  // namespace zt::train
