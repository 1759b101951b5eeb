// Transformer: builds the blocks of a family from its config, owns parameter storage in one
// process, initializes it (see transformer.h). Tested by tests/nn/test_transformer_*.cpp.
#include "zerotrain/nn/transformer.h"

#include <algorithm>

#include "zerotrain/core/error.h"
#include "zerotrain/nn/decoder_layer.h"
#include "zerotrain/nn/embedding_block.h"
#include "zerotrain/nn/head_block.h"
#include "zerotrain/nn/init.h"
#include "zerotrain/nn/parameter_util.h"

namespace zt::nn {

namespace {

void check_options(const TransformerOptions& o) {
  if (!is_floating(o.param_dtype))
    throw DTypeError("transformer",
                     str("param_dtype must be a floating type, got ", dtype_name(o.param_dtype)));
  if (o.grad_dtype != DType::f32 && o.grad_dtype != o.param_dtype)
    throw DTypeError("transformer",
                     str("grad_dtype must be f32 or param_dtype (", dtype_name(o.param_dtype),
                         "), got ", dtype_name(o.grad_dtype)));
}

}  // namespace

Transformer::Transformer(const ModelConfig& config, const TransformerOptions& options)
    : config_(config), options_(options) {
  config_.validate();
  check_options(options_);
  auto embedding = std::make_unique<EmbeddingBlock>(config_);
  Parameter* tied = config_.tie_word_embeddings ? &embedding->token_weight() : nullptr;
  blocks_.push_back(std::move(embedding));
  for (int64_t i = 0; i < config_.num_layers; ++i)
    blocks_.push_back(std::make_unique<DecoderLayerBlock>(config_, i));
  blocks_.push_back(std::make_unique<HeadBlock>(config_, tied));
  if (options_.allocate) {
    for (Parameter* p : parameters()) {
      p->value = Tensor::zeros(p->shape, options_.param_dtype, options_.device);
      if (options_.allocate_grads)
        p->grad = Tensor::zeros(p->shape, options_.grad_dtype, options_.device);
    }
    // The zero fills ran on the device's default stream; steps run on streams of their own.
    if (options_.device.is_cuda()) synchronize_device(options_.device);
  }
}

Transformer::~Transformer() = default;

std::vector<Parameter*> Transformer::parameters() {
  std::vector<Parameter*> out;
  for (auto& b : blocks_)
    for (Parameter* p : b->parameters())
      out.push_back(p);
  return out;
}

Parameter* Transformer::find(const std::string& name) {
  for (auto& b : blocks_)
    for (Parameter* p : b->parameters())
      if (p->name == name) return p;
  return nullptr;
}

void Transformer::init_random(uint64_t seed, float std) {
  // Generated where the values live; on a GPU on the default stream, like the zero fills above.
  for (Parameter* p : parameters()) {
    Tensor flat = value_of(*p).flatten();
    init_fill(config_, *p, seed, std, 0, flat);
  }
  if (options_.device.is_cuda()) synchronize_device(options_.device);
}

void Transformer::zero_grads(Stream stream) {
  for (Parameter* p : parameters()) {
    if (!p->grad.defined()) continue;
    if (!p->grad.is_contiguous())
      throw ShapeError("transformer",
                       str(p->name, ": grad ", p->grad.describe(), " is not contiguous"));
    zero_bytes(p->grad.data(), p->grad.device(), p->grad.nbytes(), stream);
  }
}

}  // namespace zt::nn
