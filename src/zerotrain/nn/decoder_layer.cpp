// Decoder layer block (see decoder_layer.h).
#include "zerotrain/nn/decoder_layer.h"

#include "zerotrain/core/error.h"
#include "zerotrain/kernels/elementwise.h"
#include "zerotrain/nn/block_checks.h"
#include "zerotrain/nn/family_registry.h"
#include "zerotrain/nn/layer_parts.h"

namespace zt::nn {

namespace {

NormKind norm_kind(const ModelConfig& c) {
  return architecture_of(c).layer_norm ? NormKind::layer : NormKind::rms;
}

}  // namespace

DecoderLayerBlock::DecoderLayerBlock(const ModelConfig& c, int64_t index)
    : name_(str(family_traits(c.family).hf.layer_prefix, index)),
      hidden_(c.hidden_size),
      norms_interleaved_(architecture_of(c).norms_interleaved),
      norm1_(name_ + family_traits(c.family).hf.input_norm, c.hidden_size, norm_kind(c),
             c.norm_eps),
      norm2_(name_ + family_traits(c.family).hf.post_attention_norm, c.hidden_size, norm_kind(c),
             c.norm_eps),
      attn_(make_attention(name_ + family_traits(c.family).hf.attention, c)),
      mlp_(make_mlp(name_ + ".mlp", c)) {}

std::vector<Parameter*> DecoderLayerBlock::parameters() {
  std::vector<Parameter*> out;
  if (norms_interleaved_) {
    norm1_.append_parameters(out);
    attn_->append_parameters(out);
    norm2_.append_parameters(out);
    mlp_->append_parameters(out);
  } else {
    attn_->append_parameters(out);
    mlp_->append_parameters(out);
    norm1_.append_parameters(out);
    norm2_.append_parameters(out);
  }
  return out;
}

Tensor DecoderLayerBlock::forward(const Tensor& x, const StepContext& ctx) {
  dims_ = check_hidden_states(name_, x, hidden_, ctx);
  dims_.documents = ctx.documents;
  const Stream s = ctx.stream;
  const Tensor xf = x.view({dims_.tokens(), hidden_});
  Tensor h = attn_->forward(norm1_.forward(xf, s), dims_, s);
  kernels::add(xf, h, h, 1.0f, s);  // h = x + attn(norm1(x))
  if (ctx.recomputing) {  // the output is the next layer's kept input: [Note: recompute keeps more]
    mlp_->recompute(norm2_.forward(h, s), dims_, s);
    saved_ = true;
    return {};
  }
  Tensor y = mlp_->forward(norm2_.forward(h, s), dims_, s);
  kernels::add(h, y, y, 1.0f, s);  // y = h + mlp(norm2(h))
  saved_ = true;
  return y.view(x.shape());
}

Tensor DecoderLayerBlock::backward(const Tensor& dy, const StepContext& ctx) {
  if (!saved_) throw ValueError("nn", str(name_, ": backward without a saved forward"));
  if (check_hidden_states(name_, dy, hidden_, ctx, "gradient").tokens() != dims_.tokens())
    throw ShapeError("nn",
                     str(name_, ": gradient ", dy.describe(), " does not match the forward's [",
                         dims_.batch, ", ", dims_.seq, ", ", hidden_, "]"));
  const Stream s = ctx.stream;
  const Tensor dyf = dy.view({dims_.tokens(), hidden_});
  Tensor dh = norm2_.backward(mlp_->backward(dyf, s), s);
  kernels::add(dh, dyf, dh, 1.0f, s);  // the residual path
  Tensor dx = norm1_.backward(attn_->backward(dh, s), s);
  kernels::add(dx, dh, dx, 1.0f, s);
  release_saved();
  return dx.view(dy.shape());
}

void DecoderLayerBlock::release_saved() {
  saved_ = false;
  dims_.documents = {};
  norm1_.release();
  norm2_.release();
  attn_->release();
  mlp_->release();
}

}  // namespace zt::nn
