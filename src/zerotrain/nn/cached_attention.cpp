// Cached attention of both families (see cached_attention.h).
#include "zerotrain/nn/cached_attention.h"

#include "zerotrain/core/error.h"
#include "zerotrain/kernels/cached_attention.h"
#include "zerotrain/kernels/rope.h"
#include "zerotrain/nn/architecture.h"
#include "zerotrain/nn/linear.h"
#include "zerotrain/nn/rotary.h"

namespace zt::nn {

namespace {

// q: [B, T, Hq, D] against the cache of `layer` (which already holds the new keys) -> [N, Hq * D].
Tensor attend(const Tensor& q, const NewPositions& positions, const KvCache& cache, int64_t layer,
              int64_t window, Stream stream) {
  Tensor out = Tensor::empty(q.shape(), q.dtype(), q.device(), stream);
  kernels::AttentionOptions opt;
  opt.window = window;
  kernels::cached_attention_forward(q, cache.keys(layer), cache.values(layer), positions.past, out,
                                    opt, stream);
  return out.view({q.size(0) * q.size(1), q.size(2) * q.size(3)});
}

class CachedSelfAttention : public CachedAttention {
 public:
  CachedSelfAttention(const std::string& prefix, const ModelConfig& c, const Architecture& arch)
      : q_proj_(prefix + ".q_proj", c.hidden_size, c.num_heads * c.head_dim, arch.qkv_bias),
        k_proj_(prefix + ".k_proj", c.hidden_size, c.num_kv_heads * c.head_dim, arch.qkv_bias),
        v_proj_(prefix + ".v_proj", c.hidden_size, c.num_kv_heads * c.head_dim, arch.qkv_bias),
        o_proj_(prefix + ".o_proj", c.num_heads * c.head_dim, c.hidden_size, arch.o_bias),
        heads_(c.num_heads),
        kv_heads_(c.num_kv_heads),
        head_dim_(c.head_dim),
        window_(arch.sliding_window ? c.sliding_window : 0),
        host_inv_freq_(rope_inv_freq_for(c)) {}

  Tensor forward(const Tensor& x, TokenDims dims, const NewPositions& positions, KvCache& cache,
                 int64_t layer, Stream stream) override {
    const int64_t b = dims.batch, t = dims.seq;
    if (!inv_freq_.defined() || inv_freq_.device() != x.device())
      inv_freq_ = host_inv_freq_.to(x.device(), stream);
    Tensor q = q_proj_.forward(x, stream).view({b, t, heads_, head_dim_});
    Tensor k = k_proj_.forward(x, stream).view({b, t, kv_heads_, head_dim_});
    Tensor v = v_proj_.forward(x, stream).view({b, t, kv_heads_, head_dim_});
    kernels::rope_forward(q, positions.ids, inv_freq_, q, stream);
    kernels::rope_forward(k, positions.ids, inv_freq_, k, stream);
    cache.write(layer, k, v, stream);
    return o_proj_.forward(attend(q, positions, cache, layer, window_, stream), stream);
  }

  void append_parameters(std::vector<Parameter*>& out) override {
    q_proj_.append_parameters(out);
    k_proj_.append_parameters(out);
    v_proj_.append_parameters(out);
    o_proj_.append_parameters(out);
  }

 private:
  Linear q_proj_, k_proj_, v_proj_, o_proj_;
  int64_t heads_, kv_heads_, head_dim_, window_;
  Tensor host_inv_freq_;  // [D/2] f32 on the host
  Tensor inv_freq_;       // [D/2] f32 on the activations' device
};

class CachedGpt2Attention : public CachedAttention {
 public:
  CachedGpt2Attention(const std::string& prefix, const ModelConfig& c)
      : c_attn_(prefix + ".c_attn", c.hidden_size, 3 * c.hidden_size, true, WeightLayout::in_out),
        c_proj_(prefix + ".c_proj", c.hidden_size, c.hidden_size, true, WeightLayout::in_out),
        heads_(c.num_heads),
        head_dim_(c.head_dim) {}

  Tensor forward(const Tensor& x, TokenDims dims, const NewPositions& positions, KvCache& cache,
                 int64_t layer, Stream stream) override {
    const int64_t b = dims.batch, t = dims.seq, n = dims.tokens(), c = heads_ * head_dim_;
    // c_attn's output [N, 3C] holds q | k | v side by side: regrouped as [3, N, C].
    Tensor qkv = c_attn_.forward(x, stream).view({n, 3, c}).transpose(0, 1).contiguous(stream);
    auto part = [&](int64_t i) { return qkv.select(0, i).view({b, t, heads_, head_dim_}); };
    cache.write(layer, part(1), part(2), stream);
    return c_proj_.forward(attend(part(0), positions, cache, layer, 0, stream), stream);
  }

  void append_parameters(std::vector<Parameter*>& out) override {
    c_attn_.append_parameters(out);
    c_proj_.append_parameters(out);
  }

 private:
  Linear c_attn_;  // weight [C, 3C], bias [3C]
  Linear c_proj_;  // weight [C, C], bias [C]
  int64_t heads_, head_dim_;
};

}  // namespace

std::unique_ptr<CachedAttention> make_cached_attention(const std::string& prefix,
                                                       const ModelConfig& config) {
  const Architecture arch = architecture_of(config);
  switch (arch.attention) {
    case AttentionKind::projected:
      return std::make_unique<CachedSelfAttention>(prefix, config, arch);
    case AttentionKind::gpt2:
      return std::make_unique<CachedGpt2Attention>(prefix, config);
  }
  throw ValueError("generate", str(prefix, ": no cached attention of this kind"));
}

}  // namespace zt::nn
