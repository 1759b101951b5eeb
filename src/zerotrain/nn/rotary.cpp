// RoPE frequencies and tables (see rotary.h).
#include "zerotrain/nn/rotary.h"

#include <numbers>

#include "zerotrain/kernels/rope.h"

namespace zt::nn {

void apply_llama3_rope_scaling(std::vector<float>& inv_freq, const RopeScaling& s) {
  // Every tensor step in f32, in the order the torch expressions of _compute_llama3_parameters
  // evaluate; Python scalars enter as f32 (`scalar / tensor` is torch's reciprocal(tensor) *
  // scalar).
  const double old_len = static_cast<double>(s.original_max_position_embeddings);
  const float factor = static_cast<float>(s.factor);
  const float low_freq_factor = static_cast<float>(s.low_freq_factor);
  const float freq_span = static_cast<float>(s.high_freq_factor - s.low_freq_factor);
  const float low_freq_wavelen = static_cast<float>(old_len / s.low_freq_factor);
  const float high_freq_wavelen = static_cast<float>(old_len / s.high_freq_factor);
  const float two_pi = static_cast<float>(2 * std::numbers::pi);
  for (float& f : inv_freq) {
    const float wavelen = (1.0f / f) * two_pi;
    const float scaled = wavelen > low_freq_wavelen ? f / factor : f;
    if (wavelen < high_freq_wavelen || wavelen > low_freq_wavelen) {
      f = scaled;
      continue;
    }
    const float smooth =
        ((1.0f / wavelen) * static_cast<float>(old_len) - low_freq_factor) / freq_span;
    f = (1.0f - smooth) * scaled / factor + smooth * scaled;
  }
}

Tensor rope_inv_freq_for(const ModelConfig& config) {
  Tensor t = kernels::rope_inv_freq(config.head_dim, config.rope_theta);
  if (config.rope_scaling.factor == 0) return t;
  std::vector<float> f = t.to_floats();
  apply_llama3_rope_scaling(f, config.rope_scaling);
  return Tensor::from_floats(f, t.shape(), DType::f32);
}

Rotary::Rotary(const ModelConfig& config) : host_inv_freq_(rope_inv_freq_for(config)) {}

void Rotary::prepare(const Tensor& x, Stream stream) {
  const Device d = x.device();
  if (!inv_freq_.defined() || inv_freq_.device() != d) {
    inv_freq_ = host_inv_freq_.to(d, stream);
    positions_ = {};
  }
  const int64_t s = x.size(1);
  if (!positions_.defined() || positions_.size(0) != s) {
    std::vector<int64_t> pos(static_cast<size_t>(s));
    for (int64_t i = 0; i < s; ++i)
      pos[static_cast<size_t>(i)] = i;
    positions_ = Tensor::from_ints(pos, {s}, DType::i32).to(d, stream);
  }
}

void Rotary::forward(Tensor& x, const Tensor& position_ids, Stream stream) {
  prepare(x, stream);
  kernels::rope_forward(x, position_ids.defined() ? position_ids : positions_, inv_freq_, x, stream);
}

void Rotary::backward(Tensor& dx, const Tensor& position_ids, Stream stream) {
  prepare(dx, stream);
  kernels::rope_backward(dx, position_ids.defined() ? position_ids : positions_, inv_freq_, dx,
                         stream);
}

}  // namespace zt::nn
