// A decoder layer's attention and MLP by kind (see layer_parts.h).
#include "zerotrain/nn/layer_parts.h"

#include "zerotrain/core/error.h"
#include "zerotrain/nn/architecture.h"
#include "zerotrain/nn/gated_mlp.h"
#include "zerotrain/nn/gelu_mlp.h"
#include "zerotrain/nn/gpt2_attention.h"
#include "zerotrain/nn/self_attention.h"

namespace zt::nn {

std::unique_ptr<Sublayer> make_attention(const std::string& prefix, const ModelConfig& config) {
  const Architecture arch = architecture_of(config);
  switch (arch.attention) {
    case AttentionKind::projected:
      return std::make_unique<SelfAttention>(prefix, config, arch);
    case AttentionKind::gpt2:
      return std::make_unique<Gpt2Attention>(prefix, config);
  }
  throw ValueError("nn", str(prefix, ": no attention of this kind"));
}

std::unique_ptr<Sublayer> make_mlp(const std::string& prefix, const ModelConfig& config) {
  const Architecture arch = architecture_of(config);
  switch (arch.mlp) {
    case MlpKind::swiglu:
      return std::make_unique<GatedMlp>(prefix, config, arch);
    case MlpKind::gpt2_gelu:
      return std::make_unique<GeluMlp>(prefix, config);
  }
  throw ValueError("nn", str(prefix, ": no MLP of this kind"));
}

}  // namespace zt::nn
