// The toy two-stack model of two_stream_toy.h.
#include "nn/two_stream_toy.h"

#include <cmath>
#include <string>

#include "zerotrain/core/error.h"
#include "zerotrain/nn/second_stream.h"

namespace zt::test {
namespace {

constexpr int64_t R = TwoStreamToy::kRows, W = TwoStreamToy::kWidth;

std::vector<double> host(const Tensor& t) {
  const std::vector<float> f = t.to_floats();
  return {f.begin(), f.end()};
}

Tensor device_tensor(const std::vector<double>& v) {
  return Tensor::from_floats(std::vector<float>(v.begin(), v.end()), {R, W}, DType::f32);
}

// out[r, j] += sum_k a[r, k] w[k, j] (transpose_w: w[j, k]).
void add_matmul(const std::vector<double>& a, const std::vector<double>& w, bool transpose_w,
                std::vector<double>& out) {
  for (int64_t r = 0; r < R; ++r)
    for (int64_t j = 0; j < W; ++j)
      for (int64_t k = 0; k < W; ++k)
        out[r * W + j] += a[r * W + k] * w[transpose_w ? j * W + k : k * W + j];
}

// grad(w)[k, j] += sum_r a[r, k] dz[r, j]
void add_weight_grad(const std::vector<double>& a, const std::vector<double>& dz,
                     nn::Parameter& w) {
  float* g = w.grad.data_as<float>();
  for (int64_t k = 0; k < W; ++k)
    for (int64_t j = 0; j < W; ++j) {
      double s = 0;
      for (int64_t r = 0; r < R; ++r)
        s += a[r * W + k] * dz[r * W + j];
      g[k * W + j] += static_cast<float>(s);
    }
}

void add_bias_grad(const std::vector<double>& dz, nn::Parameter& b) {
  float* g = b.grad.data_as<float>();
  for (int64_t j = 0; j < W; ++j) {
    double s = 0;
    for (int64_t r = 0; r < R; ++r)
      s += dz[r * W + j];
    g[j] += static_cast<float>(s);
  }
}

nn::Parameter param(const std::string& name, Shape shape, nn::ParamKind kind) {
  nn::Parameter p;
  p.name = name;
  p.shape = std::move(shape);
  p.kind = kind;
  return p;
}

// Hands out a held tensor, ignoring x; keeps the gradient it is given.
class HeldInput : public nn::Block {
 public:
  explicit HeldInput(std::string name) : name_(std::move(name)) {}
  std::string name() const override { return name_; }
  std::vector<nn::Parameter*> parameters() override { return {}; }
  Tensor forward(const Tensor&, const nn::StepContext&) override { return value.clone(); }
  Tensor backward(const Tensor& dy, const nn::StepContext&) override {
    grad = dy.clone();
    return {};
  }
  void release_saved() override {}
  Tensor value, grad;

 private:
  std::string name_;
};

// y = tanh(x A + b): an encoder layer, or with Base = StreamWriterBlock the encoder's last.
template <class Base>
class TanhLayer : public Base {
 public:
  TanhLayer(const std::string& name, std::shared_ptr<int64_t> forwards)
      : name_(name),
        a_(param(name + ".weight", {W, W}, nn::ParamKind::weight)),
        b_(param(name + ".bias", {W}, nn::ParamKind::bias)),
        forwards_(std::move(forwards)) {}
  std::string name() const override { return name_; }
  std::vector<nn::Parameter*> parameters() override { return {&a_, &b_}; }
  bool checkpointable() const override { return true; }
  Tensor forward(const Tensor& x, const nn::StepContext&) override {
    ++*forwards_;
    x_ = host(x);
    y_ = std::vector<double>(R * W);
    add_matmul(x_, host(a_.value), false, y_);
    const std::vector<double> b = host(b_.value);
    for (int64_t i = 0; i < R * W; ++i)
      y_[i] = std::tanh(y_[i] + b[i % W]);
    return device_tensor(y_);
  }
  Tensor backward(const Tensor& dy, const nn::StepContext&) override {
    if (y_.empty()) throw ValueError("two_stream_toy", name_ + ": backward without a forward");
    std::vector<double> dz = host(dy);
    for (int64_t i = 0; i < R * W; ++i)
      dz[i] *= 1 - y_[i] * y_[i];
    add_weight_grad(x_, dz, a_);
    add_bias_grad(dz, b_);
    std::vector<double> dx(R * W);
    add_matmul(dz, host(a_.value), true, dx);
    release_saved();
    return device_tensor(dx);
  }
  void release_saved() override { x_.clear(), y_.clear(); }

 private:
  std::string name_;
  nn::Parameter a_, b_;
  std::shared_ptr<int64_t> forwards_;
  std::vector<double> x_, y_;  // [R, W] the input and output of the last forward
};

// y = x + tanh(x A + s B + b): a decoder layer reading the stream s.
class CrossLayer : public nn::StreamReaderBlock {
 public:
  CrossLayer(const std::string& name, std::shared_ptr<int64_t> forwards)
      : name_(name),
        a_(param(name + ".self.weight", {W, W}, nn::ParamKind::weight)),
        c_(param(name + ".cross.weight", {W, W}, nn::ParamKind::weight)),
        b_(param(name + ".bias", {W}, nn::ParamKind::bias)),
        forwards_(std::move(forwards)) {}
  std::string name() const override { return name_; }
  std::vector<nn::Parameter*> parameters() override { return {&a_, &c_, &b_}; }
  bool checkpointable() const override { return true; }
  Tensor forward_reading(const Tensor& x, const Tensor& stream, const nn::StepContext&) override {
    ++*forwards_;
    x_ = host(x);
    s_ = host(stream);
    h_ = std::vector<double>(R * W);
    add_matmul(x_, host(a_.value), false, h_);
    add_matmul(s_, host(c_.value), false, h_);
    const std::vector<double> b = host(b_.value);
    std::vector<double> y(R * W);
    for (int64_t i = 0; i < R * W; ++i) {
      h_[i] = std::tanh(h_[i] + b[i % W]);
      y[i] = x_[i] + h_[i];
    }
    return device_tensor(y);
  }
  nn::ReaderGrads backward_reading(const Tensor& dy, const nn::StepContext&) override {
    if (h_.empty()) throw ValueError("two_stream_toy", name_ + ": backward without a forward");
    const std::vector<double> dyh = host(dy);
    std::vector<double> dz = dyh;
    for (int64_t i = 0; i < R * W; ++i)
      dz[i] *= 1 - h_[i] * h_[i];
    add_weight_grad(x_, dz, a_);
    add_weight_grad(s_, dz, c_);
    add_bias_grad(dz, b_);
    std::vector<double> dx = dyh, ds(R * W);
    add_matmul(dz, host(a_.value), true, dx);
    add_matmul(dz, host(c_.value), true, ds);
    release_saved();
    return {device_tensor(dx), device_tensor(ds)};
  }
  void release_saved() override { x_.clear(), s_.clear(), h_.clear(); }

 private:
  std::string name_;
  nn::Parameter a_, c_, b_;
  std::shared_ptr<int64_t> forwards_;
  std::vector<double> x_, s_, h_;  // [R, W] the last forward's input, stream and tanh branch
};

// loss = sum(c * d) + 0.5 * sum(d * d), c[i] = (i % 5 - 2) / 4.
class ToyLoss : public nn::Block {
 public:
  std::string name() const override { return "loss"; }
  std::vector<nn::Parameter*> parameters() override { return {}; }
  Tensor forward(const Tensor& x, const nn::StepContext&) override {
    d_ = host(x);
    double loss = 0;
    for (int64_t i = 0; i < R * W; ++i)
      loss += weight(i) * d_[i] + 0.5 * d_[i] * d_[i];
    return Tensor::from_floats({static_cast<float>(loss)}, {1}, DType::f32);
  }
  Tensor backward(const Tensor&, const nn::StepContext& ctx) override {
    std::vector<double> dx(R * W);
    for (int64_t i = 0; i < R * W; ++i)
      dx[i] = (weight(i) + d_[i]) * ctx.loss_scale;
    d_.clear();
    return device_tensor(dx);
  }
  void release_saved() override { d_.clear(); }

 private:
  static double weight(int64_t i) { return static_cast<double>(i % 5 - 2) / 4; }
  std::vector<double> d_;  // [R, W] the last forward's input
};

}  // namespace

TwoStreamToy::TwoStreamToy(int64_t encoder_layers, int64_t decoder_layers, bool side_tap) {
  if (encoder_layers < 1 || decoder_layers < 1)
    throw ValueError("two_stream_toy", "needs at least one encoder and one decoder layer");
  auto enc_in = std::make_unique<HeldInput>("encoder.input");
  encoder_input = &enc_in->value;
  encoder_input_grad = &enc_in->grad;
  blocks.push_back(std::move(enc_in));
  for (int64_t i = 0; i + 1 < encoder_layers; ++i)
    blocks.push_back(
        std::make_unique<TanhLayer<nn::Block>>("encoder." + std::to_string(i), layer_forwards));
  blocks.push_back(std::make_unique<TanhLayer<nn::StreamWriterBlock>>(
      "encoder." + std::to_string(encoder_layers - 1), layer_forwards));
  if (!side_tap) {
    auto dec_in = std::make_unique<HeldInput>("decoder.input");
    decoder_input = &dec_in->value;
    decoder_input_grad = &dec_in->grad;
    blocks.push_back(std::move(dec_in));
  }
  for (int64_t j = 0; j < decoder_layers; ++j)
    blocks.push_back(std::make_unique<CrossLayer>("decoder." + std::to_string(j), layer_forwards));
  blocks.push_back(std::make_unique<ToyLoss>());
}

std::vector<nn::Parameter*> TwoStreamToy::parameters() {
  std::vector<nn::Parameter*> out;
  for (auto& b : blocks)
    for (nn::Parameter* p : b->parameters())
      out.push_back(p);
  return out;
}

}  // namespace zt::test
