// Head block: final norm, vocabulary projection, fused cross-entropy (see head_block.h).
#include "zerotrain/nn/head_block.h"

#include "zerotrain/core/error.h"
#include "zerotrain/kernels/cross_entropy.h"
#include "zerotrain/kernels/elementwise.h"
#include "zerotrain/kernels/reduce.h"
#include "zerotrain/nn/block_checks.h"
#include "zerotrain/nn/family_registry.h"
#include "zerotrain/nn/linear.h"
#include "zerotrain/nn/loss_targets.h"
#include "zerotrain/nn/parameter_util.h"

namespace zt::nn {

namespace {

// The divisor of the summed losses: the trainer's global count, or this batch's own.
int64_t loss_items(const StepContext& ctx, const Tensor& targets) {
  if (ctx.num_items_in_batch >= 0) return ctx.num_items_in_batch;
  return count_loss_targets(targets, ctx.stream);
}

}  // namespace

HeadBlock::HeadBlock(const ModelConfig& c, Parameter* tied_embedding)
    : norm(family_traits(c.family).hf.final_norm, c.hidden_size,
           architecture_of(c).layer_norm ? NormKind::layer : NormKind::rms, c.norm_eps),
      tied_(tied_embedding),
      lm_head_(tied_embedding ? Parameter{}
                              : make_parameter("lm_head.weight", {c.vocab_size, c.hidden_size},
                                               ParamKind::weight)),
      hidden_(c.hidden_size),
      vocab_(c.vocab_size) {}

std::vector<Parameter*> HeadBlock::parameters() {
  std::vector<Parameter*> out;
  norm.append_parameters(out);
  if (!tied_) out.push_back(&lm_head_);
  return out;
}

std::vector<Parameter*> HeadBlock::shared_parameters() {
  if (tied_) return {tied_};
  return {};
}

Tensor HeadBlock::logits(const Tensor& x, const StepContext& ctx) {
  const TokenDims dims = check_hidden_states(name(), x, hidden_, ctx);
  Tensor h = norm.apply(x.view({dims.tokens(), hidden_}), ctx.stream);
  Tensor out = Tensor::empty({dims.tokens(), vocab_}, h.dtype(), h.device(), ctx.stream);
  linear_forward(h, value_of(projection()), nullptr, WeightLayout::out_in, out, ctx.stream);
  return out.view({dims.batch, dims.seq, vocab_});
}

Tensor HeadBlock::forward(const Tensor& x, const StepContext& ctx) {
  dims_ = check_hidden_states(name(), x, hidden_, ctx);
  const TokenDims tdims = check_token_grid(name(), ctx.targets, "targets");
  if (tdims.batch != dims_.batch || tdims.seq != dims_.seq)
    throw ShapeError("nn", str(name(), ": ctx.targets ", ctx.targets.describe(),
                               " does not match the hidden states ", x.describe()));
  const Stream s = ctx.stream;
  const int64_t n = dims_.tokens();
  const Tensor targets = ctx.targets.view({n});
  normed_ = norm.forward(x.view({n, hidden_}), s);
  Tensor logits = Tensor::empty({n, vocab_}, normed_.dtype(), normed_.device(), s);
  linear_forward(normed_, value_of(projection()), nullptr, WeightLayout::out_in, logits, s);

  const int64_t items = loss_items(ctx, targets);  // See [Note: loss normalisation].
  loss_scale_ = ctx.loss_scale;
  const float grad_scale = items > 0 ? ctx.loss_scale / static_cast<float>(items) : 0.0f;
  Tensor losses = Tensor::empty({n}, DType::f32, logits.device(), s);
  kernels::cross_entropy_fused(logits, targets, losses, grad_scale, kIgnoreIndex, s);
  dlogits_ = logits;  // now the gradient; see [Note: fused loss]

  Tensor loss = Tensor::empty({1}, DType::f32, losses.device(), s);
  kernels::sum(losses, loss, s);
  if (items > 0) kernels::scale(loss, 1.0f / static_cast<float>(items), loss, s);
  return loss;
}

Tensor HeadBlock::backward(const Tensor&, const StepContext& ctx) {
  if (!dlogits_.defined())
    throw ValueError("nn", str(name(), ": backward without a saved forward"));
  if (ctx.loss_scale != loss_scale_ && loss_scale_ == 0.0f)
    throw ValueError("nn", str(name(), ": forward ran with loss_scale 0, backward asks for ",
                               ctx.loss_scale, " (the gradient cannot be rescaled)"));
  const float alpha = ctx.loss_scale == loss_scale_ ? 1.0f : ctx.loss_scale / loss_scale_;
  const Stream s = ctx.stream;
  Parameter& w = projection();
  Tensor dnormed = Tensor::empty(normed_.shape(), normed_.dtype(), normed_.device(), s);
  linear_backward_input(dlogits_, value_of(w), WeightLayout::out_in, dnormed, false, alpha, s);
  if (wants_grad(w))
    linear_backward_weight(normed_, dlogits_, WeightLayout::out_in, w.grad, alpha, s);
  dlogits_ = {};
  Tensor dx = norm.backward(dnormed, s);
  release_saved();
  return dx.view({dims_.batch, dims_.seq, hidden_});
}

void HeadBlock::release_saved() {
  norm.release();
  normed_ = dlogits_ = {};
}

}  // namespace zt::nn
