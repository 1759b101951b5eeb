#include "nn/nn_test_util.h"

#include <cmath>

#include "support/test_util.h"
#include "zerotrain/nn/block_runner.h"

namespace zt::test {

using nn::Family;
using nn::ModelConfig;
using nn::Parameter;

ModelConfig tiny_config(Family family) {
  ModelConfig c;
  c.family = family;
  c.vocab_size = 50;
  c.hidden_size = 32;
  c.intermediate_size = 64;
  c.num_layers = 2;
  c.num_heads = 4;
  c.num_kv_heads = 2;
  c.head_dim = 8;
  c.max_position_embeddings = 16;
  c.norm_eps = 1e-5;
  c.rope_theta = 10000;
  switch (family) {
    case Family::llama:
      c.rope_scaling = {8.0, 1.0, 4.0, 64};
      break;
    case Family::mistral:
      c.sliding_window = 3;
      break;
    case Family::qwen2:
      c.rope_theta = 1000000;
      c.norm_eps = 1e-6;
      break;
    case Family::gpt2:
      c.num_kv_heads = 4;
      c.tie_word_embeddings = true;
      c.hidden_act = "gelu_new";
      break;
  }
  return c;
}

ModelConfig tiny_cuda_config(Family family) {
  ModelConfig c = tiny_config(family);
  c.head_dim = 32;
  c.hidden_size = 128;
  c.intermediate_size = 128;
  c.max_position_embeddings = 64;  // the CUDA tests run sequences of up to 40 tokens
  return c;
}

const std::vector<Family>& all_families() {
  static const std::vector<Family> f{Family::llama, Family::mistral, Family::qwen2, Family::gpt2};
  return f;
}

nn::StepContext make_step(const ModelConfig& c, int64_t batch, int64_t seq, uint64_t seed,
                          DType compute, Device device) {
  nn::StepContext ctx;
  ctx.device = device;
  ctx.stream = Stream::default_for(device);
  ctx.compute_dtype = compute;
  ctx.tokens = random_ints({batch, seq}, DType::i32, seed, 0, c.vocab_size, device);
  std::vector<int64_t> t =
      random_ints({batch, seq}, DType::i64, seed + 1, 0, c.vocab_size).to_ints();
  for (size_t i = 0; i < t.size(); i += 5)
    t[i] = -100;
  ctx.targets = Tensor::from_ints(t, {batch, seq}, DType::i64, device);
  return ctx;
}

void allocate(const std::vector<Parameter*>& params, DType value_dtype, DType grad_dtype,
              Device device) {
  for (Parameter* p : params) {
    p->value = Tensor::zeros(p->shape, value_dtype, device);
    p->grad = Tensor::zeros(p->shape, grad_dtype, device);
  }
}

void randomize(const std::vector<Parameter*>& params, uint64_t seed, float scale) {
  for (size_t i = 0; i < params.size(); ++i) {
    Parameter* p = params[i];
    const size_t n = static_cast<size_t>(numel_of(p->shape));
    const uint64_t s = seed * 1000 + i;
    std::vector<float> v;
    switch (p->kind) {
      case nn::ParamKind::norm:
        v = random_floats(n, s, 0.5f, 1.5f);
        break;
      case nn::ParamKind::bias:
        v = random_floats(n, s, -0.2f, 0.2f);
        break;
      default:
        v = random_floats(n, s, -scale, scale);
        break;
    }
    p->value.copy_from(Tensor::from_floats(v, p->shape, p->value.dtype()));
  }
}

std::vector<std::vector<float>> values_of(const std::vector<Parameter*>& params) {
  std::vector<std::vector<float>> out;
  for (Parameter* p : params)
    out.push_back(p->value.to_floats());
  return out;
}

void set_values(const std::vector<Parameter*>& params,
                const std::vector<std::vector<float>>& values) {
  for (size_t i = 0; i < params.size(); ++i)
    params[i]->value.copy_from(Tensor::from_floats(
        values[i], params[i]->shape, params[i]->value.dtype(), params[i]->value.device()));
}

std::vector<std::vector<double>> grads_of(const std::vector<Parameter*>& params) {
  std::vector<std::vector<double>> out;
  for (Parameter* p : params)
    out.push_back(to_doubles(p->grad));
  return out;
}

void zero_grads(const std::vector<Parameter*>& params) {
  for (Parameter* p : params)
    p->grad.fill(0.0);
}

double model_loss(nn::Transformer& m, const nn::StepContext& ctx) {
  nn::BlockRunner runner(m.blocks());
  const double loss = runner.forward(ctx).to_floats(ctx.stream)[0];
  for (auto& b : m.blocks())
    b->release_saved();
  return loss;
}

double model_loss_and_grads(nn::Transformer& m, const nn::StepContext& ctx, bool checkpoint) {
  m.zero_grads(ctx.stream);
  nn::BlockRunner runner(m.blocks(), {checkpoint});
  const double loss = runner.forward_backward(ctx).to_floats(ctx.stream)[0];
  synchronize(ctx.stream);  // the gradients are read on the host next
  return loss;
}

void expect_layer_gradients_match_fd(const LayerProbe& layer, const Tensor& x, uint64_t seed,
                                     const std::string& what) {
  const Tensor y = layer.forward(x);
  const auto cot = to_doubles(random_tensor(y.shape(), DType::f32, seed));
  zero_grads(layer.params);
  const Tensor dx = layer.backward(Tensor::from_floats(std::vector<float>(cot.begin(), cot.end()),
                                                       y.shape(), y.dtype(), y.device()));
  std::vector<std::vector<double>> grads{to_doubles(dx)};
  std::vector<std::vector<float>> inputs{x.to_floats()};
  for (auto* p : layer.params) {
    grads.push_back(to_doubles(p->grad));
    inputs.push_back(p->value.to_floats());
  }
  auto loss = [&](const std::vector<std::vector<float>>& v) {
    std::vector<std::vector<float>> pv(v.begin() + 1, v.end());
    set_values(layer.params, pv);
    return dot(
        to_doubles(layer.forward(Tensor::from_floats(v[0], x.shape(), x.dtype(), x.device()))),
        cot);
  };
  expect_gradients_match_fd(loss, inputs, grads, what + " (all inputs)", 1e-2, 1e-2, 3, seed);
  for (size_t k = 0; k < inputs.size(); ++k) {
    auto one = [&](const std::vector<std::vector<float>>& v) {
      auto all = inputs;
      all[k] = v[0];
      return loss(all);
    };
    const std::string name = k == 0 ? std::string("x") : layer.params[k - 1]->name;
    expect_gradients_match_fd(one, {inputs[k]}, {grads[k]}, what + " " + name, 1e-2, 1e-2, 1,
                              seed + 7 * k);
  }
  loss(inputs);  // restores the values
}

double relative_l2(const std::vector<std::vector<double>>& a,
                   const std::vector<std::vector<double>>& b) {
  double num = 0, den = 0;
  for (size_t i = 0; i < a.size(); ++i)
    for (size_t j = 0; j < a[i].size(); ++j) {
      num += (a[i][j] - b[i][j]) * (a[i][j] - b[i][j]);
      den += b[i][j] * b[i][j];
    }
  return std::sqrt(num / den);
}

}  // namespace zt::test
