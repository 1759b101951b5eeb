// Cached decoder (see cached_decoder.h). A layer computes what DecoderLayerBlock::forward does:
//   h = x + attn(norm1(x));  y = h + mlp(norm2(h))
// with the attention over the cache.
#include "zerotrain/nn/cached_decoder.h"

#include <string>

#include "zerotrain/core/error.h"
#include "zerotrain/kernels/elementwise.h"
#include "zerotrain/nn/architecture.h"
#include "zerotrain/nn/family_registry.h"
#include "zerotrain/nn/layer_parts.h"
#include "zerotrain/nn/linear.h"
#include "zerotrain/nn/parameter_util.h"

namespace zt::nn {

namespace {

NormKind norm_kind(const ModelConfig& c) {
  return architecture_of(c).layer_norm ? NormKind::layer : NormKind::rms;
}

}  // namespace

struct CachedDecoder::Layer {
  Layer(const ModelConfig& c, int64_t index)
      : name(str(family_traits(c.family).hf.layer_prefix, index)),
        norm1(name + family_traits(c.family).hf.input_norm, c.hidden_size, norm_kind(c),
              c.norm_eps),
        norm2(name + family_traits(c.family).hf.post_attention_norm, c.hidden_size, norm_kind(c),
              c.norm_eps),
        attn(make_cached_attention(name + family_traits(c.family).hf.attention, c)),
        mlp(make_mlp(name + ".mlp", c)) {}

  std::string name;
  Norm norm1, norm2;
  std::unique_ptr<CachedAttention> attn;
  std::unique_ptr<Sublayer> mlp;
};

CachedDecoder::CachedDecoder(const ModelConfig& config)
    : config_(config),
      learned_positions_(architecture_of(config).learned_positions),
      wte_(family_traits(config.family).hf.embed_tokens, config.vocab_size, config.hidden_size),
      final_norm_(family_traits(config.family).hf.final_norm, config.hidden_size, norm_kind(config),
                  config.norm_eps),
      lm_head_(config.tie_word_embeddings
                   ? Parameter{}
                   : make_parameter("lm_head.weight", {config.vocab_size, config.hidden_size},
                                    ParamKind::weight)) {
  config_.validate();
  if (learned_positions_)
    wpe_ = std::make_unique<Embedding>(family_traits(config.family).hf.positions,
                                       config.max_position_embeddings, config.hidden_size);
  for (int64_t i = 0; i < config.num_layers; ++i)
    layers_.push_back(std::make_unique<Layer>(config_, i));
}

CachedDecoder::~CachedDecoder() = default;

std::vector<Parameter*> CachedDecoder::parameters() {
  std::vector<Parameter*> out{&wte_.weight};
  if (wpe_) out.push_back(&wpe_->weight);
  for (auto& l : layers_) {
    l->norm1.append_parameters(out);
    l->attn->append_parameters(out);
    l->norm2.append_parameters(out);
    l->mlp->append_parameters(out);
  }
  final_norm_.append_parameters(out);
  if (!config_.tie_word_embeddings) out.push_back(&lm_head_);
  return out;
}

void CachedDecoder::use_values_of(Transformer& model) {
  for (Parameter* p : parameters()) {
    const Parameter* source = model.find(p->name);
    if (!source) throw ValueError("generate", str("the model has no parameter ", p->name));
    if (source->shape != p->shape)
      throw ShapeError("generate", str(p->name, ": the model's ", to_string(source->shape),
                                       " is not the expected ", to_string(p->shape)));
    p->value = value_of(*source);
  }
}

KvCache CachedDecoder::make_cache(int64_t batch, int64_t capacity, Stream stream) const {
  const Tensor& table = value_of(wte_.weight);
  return KvCache({config_.num_layers, batch, capacity, config_.num_kv_heads, config_.head_dim},
                 table.dtype(), table.device(), stream);
}

Tensor CachedDecoder::forward(const Tensor& tokens, KvCache& cache, bool last_only, Stream stream) {
  const Tensor& table = value_of(wte_.weight);
  if (tokens.dim() != 2 || tokens.size(1) < 1 || tokens.size(0) != cache.shape().batch)
    throw ShapeError("generate", str("tokens ", tokens.describe(), " must be [",
                                     cache.shape().batch, ", T] with T >= 1 (the cache's batch)"));
  const int64_t b = tokens.size(0), t = tokens.size(1), n = b * t, c = config_.hidden_size;
  const int64_t past = cache.length();
  if (past + t > cache.capacity())
    throw ValueError("generate", str(past, " cached positions + ", t,
                                     " new tokens exceed the cache's ", cache.capacity()));
  if (wpe_ && past + t > config_.max_position_embeddings)
    throw ValueError(
        "generate", str(past + t, " positions exceed the model's ", config_.max_position_embeddings,
                        " (max_position_embeddings)"));
  const Device dev = table.device();
  std::vector<int64_t> pos(static_cast<size_t>(t));
  for (int64_t i = 0; i < t; ++i)
    pos[static_cast<size_t>(i)] = past + i;
  const NewPositions positions{past, Tensor::from_ints(pos, {t}, DType::i32).to(dev, stream)};

  Tensor h = wte_.forward(tokens.contiguous(stream).view({n}), stream);
  if (wpe_) {
    std::vector<int64_t> ids(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i)
      ids[static_cast<size_t>(i)] = past + i % t;
    Tensor p = wpe_->forward(Tensor::from_ints(ids, {n}, DType::i32).to(dev, stream), stream);
    kernels::add(h, p, h, 1.0f, stream);
  }
  const TokenDims dims{b, t, {}};
  for (size_t l = 0; l < layers_.size(); ++l) {
    Layer& layer = *layers_[l];
    Tensor a = layer.attn->forward(layer.norm1.apply(h, stream), dims, positions, cache,
                                   static_cast<int64_t>(l), stream);
    kernels::add(h, a, a, 1.0f, stream);  // h = x + attn(norm1(x))
    h = a;
    Tensor m = layer.mlp->forward(layer.norm2.apply(h, stream), dims, stream);
    layer.mlp->release();
    kernels::add(h, m, m, 1.0f, stream);  // y = h + mlp(norm2(h))
    h = m;
  }
  cache.advance(t);

  if (last_only && t > 1) h = h.view({b, t, c}).select(1, t - 1).contiguous(stream);
  const int64_t rows = h.numel() / c;
  Tensor normed = final_norm_.apply(h.view({rows, c}), stream);
  const Parameter& projection = config_.tie_word_embeddings ? wte_.weight : lm_head_;
  Tensor logits = Tensor::empty({rows, config_.vocab_size}, normed.dtype(), dev, stream);
  linear_forward(normed, value_of(projection), nullptr, WeightLayout::out_in, logits, stream);
  return logits.view({b, rows / b, config_.vocab_size});
}

}  // namespace zt::nn
