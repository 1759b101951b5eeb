// The evaluation of a held-out token file; see evaluation.h and [Note: evaluation].
#include "zerotrain/train/evaluation.h"

#include <cmath>
#include <cstring>

#include "zerotrain/core/error.h"
#include "zerotrain/kernels/cross_entropy.h"
#include "zerotrain/nn/head_block.h"
#include "zerotrain/nn/loss_targets.h"
#include "zerotrain/nn/row_documents.h"
#include "zerotrain/train/step_measures.h"
#include "zerotrain/train/token_data.h"

namespace zt::train {

namespace {

using nn::kIgnoreIndex;  // a masked target, as labels in transformers

// Every rank's `mine` (the same length on each), concatenated in rank order, on every rank. The
// values travel as their bits, so they arrive unchanged.
std::vector<double> all_gather_doubles(const std::vector<double>& mine, comm::Communicator* comm,
                                       Device device, Stream stream) {
  if (!comm || comm->size() == 1) return mine;
  const auto n = static_cast<int64_t>(mine.size());
  Tensor send = Tensor::empty({n}, DType::i64, Device::cpu());
  std::memcpy(send.data(), mine.data(), mine.size() * sizeof(double));
  const Tensor on_device = send.to(device, stream);
  Tensor all = Tensor::empty({n * comm->size()}, DType::i64, device, stream);
  comm->all_gather(on_device.data(), all.data(), mine.size(), DType::i64, stream);
  const Tensor host = all.to(Device::cpu(), stream);
  synchronize(stream);
  std::vector<double> out(mine.size() * static_cast<size_t>(comm->size()));
  std::memcpy(out.data(), host.data(), out.size() * sizeof(double));
  return out;
}

}  // namespace

TokenLossSum sum_token_losses(const Tensor& losses, const Tensor& targets) {
  const bool integer = targets.dtype() == DType::i32 || targets.dtype() == DType::i64;
  if (losses.dtype() != DType::f32 || !integer || losses.numel() != targets.numel() ||
      !losses.device().is_cpu() || !targets.device().is_cpu())
    throw ValueError("eval", str("sum_token_losses: expected host f32 losses and i32/i64 targets "
                                 "of one length, got ",
                                 dtype_name(losses.dtype()), " [", losses.numel(), "] and ",
                                 dtype_name(targets.dtype()), " [", targets.numel(), "]"));
  const float* l = losses.data_as<float>();
  auto target = [&targets](int64_t i) {
    return targets.dtype() == DType::i32 ? int64_t{targets.data_as<int32_t>()[i]}
                                         : targets.data_as<int64_t>()[i];
  };
  TokenLossSum s;
  for (int64_t i = 0; i < losses.numel(); ++i) {
    if (target(i) == kIgnoreIndex) continue;
    s.sum += static_cast<double>(l[i]);
    ++s.tokens;
  }
  return s;
}

Tensor forward_token_losses(std::vector<std::unique_ptr<nn::Block>>& blocks,
                            const nn::BlockHooks& hooks, const nn::StepContext& ctx) {
  auto* head = blocks.empty() ? nullptr : dynamic_cast<nn::HeadBlock*>(blocks.back().get());
  if (!head) throw ValueError("eval", "the model's last block is not its head");
  nn::BlockRunner runner(blocks);
  runner.set_hooks(hooks);
  const Tensor x = runner.forward_only(
      ctx,
      [head](nn::Block&, const Tensor& h, const nn::StepContext& c) { return head->logits(h, c); });
  const int64_t vocab = x.shape().back();
  const Tensor logits = x.view({-1, vocab});
  const int64_t n = logits.shape()[0];
  Tensor losses = Tensor::empty({n}, DType::f32, ctx.device, ctx.stream);
  Tensor lse = Tensor::empty({n}, DType::f32, ctx.device, ctx.stream);
  kernels::cross_entropy_forward(logits, ctx.targets.view({n}), losses, lse, kIgnoreIndex,
                                 ctx.stream);
  return losses;
}

Evaluator::Evaluator(const EvalConfig& config, const DataConfig& data, const nn::ModelConfig& model,
                     int rank, int world)
    : config_(config),
      rank_(rank),
      world_(world),
      seq_len_(data.seq_len),
      micro_batch_(data.micro_batch) {
  auto tokens = open_token_file_for_model(config.data, model, "--eval-data");
  if (tokens->size() == 0)
    throw ValueError("train", str("--eval-data ", config.data.string(), " is empty (0 tokens)"));
  file_sequences_ = static_cast<int64_t>((tokens->size() - 1) / static_cast<uint64_t>(seq_len_));
  if (file_sequences_ == 0)
    throw ValueError("train",
                     str("--eval-data ", config.data.string(), " (", tokens->size(),
                         " tokens) holds no sequence of --seq-len ", seq_len_, " + 1 tokens"));
  const int64_t file_batches = (file_sequences_ + micro_batch_ - 1) / micro_batch_;
  batches_ = config.batches ? std::min(*config.batches, file_batches) : file_batches;
  sequences_ = std::min(file_sequences_, batches_ * micro_batch_);
  data::DataLoaderConfig dc;
  dc.seq_len = seq_len_;
  dc.micro_batch = micro_batch_;
  dc.shuffle = false;
  dc.drop_last = false;
  loader_ = std::make_unique<data::DataLoader>(std::move(tokens), dc);
}

bool Evaluator::due(int64_t step, int64_t last_step) const {
  return step == last_step || (config_.every && step % *config_.every == 0);
}

data::Batch Evaluator::batch(int64_t j) {
  loader_->restore({0, static_cast<uint64_t>(j * micro_batch_)});
  return loader_->next();
}

monitor::EvalMetrics Evaluator::evaluate(zero::ZeroStage& engine,
                                         std::vector<std::unique_ptr<nn::Block>>& blocks,
                                         const nn::StepContext& ctx, comm::Communicator* comm,
                                         int64_t step) {
  StepTimer timer;
  const nn::BlockHooks hooks = engine.hooks();
  nn::StepContext run = ctx;
  run.loss_scale = 1.0f;
  const int64_t rounds = (batches_ + world_ - 1) / world_;
  std::vector<double> mine(static_cast<size_t>(2 * rounds), 0.0);  // (sum, tokens) per round
  engine.begin_forward_only();
  for (int64_t i = 0; i < rounds; ++i) {
    const int64_t j = i * world_ + rank_;
    const bool counted = j < batches_;
    const data::Batch b = batch(counted ? j : 0);
    run.tokens = b.inputs.to(ctx.device, ctx.stream);
    run.targets = b.targets.to(ctx.device, ctx.stream);
    run.documents = nn::row_documents(b.doc_starts, ctx.device, ctx.stream);
    const Tensor losses = forward_token_losses(blocks, hooks, run);
    if (!counted) continue;
    const Tensor host = losses.to(Device::cpu(), ctx.stream);
    synchronize(ctx.stream);
    const TokenLossSum s = sum_token_losses(host, b.targets.view({-1}));
    mine[static_cast<size_t>(2 * i)] = s.sum;
    mine[static_cast<size_t>(2 * i + 1)] = static_cast<double>(s.tokens);
  }
  engine.end_forward_only();
  const std::vector<double> all = all_gather_doubles(mine, comm, ctx.device, ctx.stream);
  double sum = 0, tokens = 0;
  for (int64_t j = 0; j < batches_; ++j) {
    const size_t at = static_cast<size_t>((j % world_) * 2 * rounds + 2 * (j / world_));
    sum += all[at];
    tokens += all[at + 1];
  }
  monitor::EvalMetrics r;
  r.step = step;
  r.tokens = static_cast<int64_t>(tokens);
  r.sequences = sequences_;
  r.loss = r.tokens > 0 ? sum / tokens : std::nan("");
  r.perplexity = std::exp(r.loss);
  r.seconds = timer.lap();
  return r;
}

std::string Evaluator::describe() const {
  const std::string tokens = str(" sequences of ", seq_len_ + 1, " tokens");
  if (sequences_ == file_sequences_)
    return str("all ", sequences_, tokens, " (", batches_, " micro-batches of ", micro_batch_, ")");
  return str("the first ", batches_, " micro-batches of ", micro_batch_, " (", sequences_, " of ",
             file_sequences_, tokens, ")");
}

}  // namespace zt::train
