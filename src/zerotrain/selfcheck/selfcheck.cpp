// Runs the self-check: finite differences on the CPU, CUDA against CPU when a GPU is visible.
#include "zerotrain/selfcheck/selfcheck.h"

#include <cmath>
#include <random>

#include "zerotrain/core/stream.h"
#include "zerotrain/core/tensor.h"
#include "zerotrain/selfcheck/diff_ops.h"
#include "zerotrain/selfcheck/finite_difference.h"

namespace zt::selfcheck {

namespace {

std::vector<float> uniform(size_t n, std::mt19937_64& rng, float range) {
  std::uniform_real_distribution<float> d(-range, range);
  std::vector<float> v(n);
  for (auto& x : v)
    x = d(rng);
  return v;
}

double dot(const std::vector<float>& a, const std::vector<float>& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i)
    s += static_cast<double>(a[i]) * b[i];
  return s;
}

// ||a - b|| / ||b|| over all outputs; NaN anywhere gives NaN.
double relative_error(const std::vector<Tensor>& got, const std::vector<Tensor>& ref) {
  double num = 0, den = 0;
  for (size_t k = 0; k < ref.size(); ++k) {
    auto a = got[k].to_floats(), b = ref[k].to_floats();
    for (size_t i = 0; i < b.size(); ++i) {
      const double d = static_cast<double>(a[i]) - b[i];
      num += d * d;
      den += static_cast<double>(b[i]) * b[i];
    }
  }
  return std::sqrt(num) / std::max(std::sqrt(den), 1e-12);
}

// Worst directional finite-difference error of L(x) = <g, forward(x)> over three random directions.
double fd_error(const DiffOp& op, std::mt19937_64& rng) {
  Inputs x;
  for (const auto& sh : op.inputs)
    x.push_back(uniform(static_cast<size_t>(numel_of(sh)), rng, op.input_range));
  const auto aux = aux_for(op, Device::cpu());
  auto tensors = [&](const Inputs& v) {
    std::vector<Tensor> t;
    for (size_t k = 0; k < v.size(); ++k)
      t.push_back(Tensor::from_floats(v[k], op.inputs[k], DType::f32));
    return t;
  };
  Tensor y0 = op.forward(tensors(x), aux, {});
  std::vector<float> g = uniform(static_cast<size_t>(y0.numel()), rng, 1.0f);
  if (op.uniform_cotangent) std::fill(g.begin(), g.end(), 0.75f);
  std::vector<std::vector<double>> grads;
  for (const Tensor& t :
       op.backward(tensors(x), aux, Tensor::from_floats(g, y0.shape(), DType::f32), {})) {
    const auto v = t.to_floats();
    grads.emplace_back(v.begin(), v.end());
  }
  auto loss = [&](const Inputs& v) { return dot(g, op.forward(tensors(v), aux, {}).to_floats()); };
  double worst = 0;
  for (int dir = 0; dir < 3; ++dir) {
    const double err = directional_check(loss, x, grads, 1e-2, rng).error;
    if (!(err <= worst)) worst = err;  // keeps NaN
  }
  return worst;
}

std::vector<Tensor> make_inputs(const std::vector<Shape>& shapes, DType dt, float range,
                                std::mt19937_64& rng) {
  std::vector<Tensor> t;
  for (const auto& sh : shapes)
    t.push_back(
        Tensor::from_floats(uniform(static_cast<size_t>(numel_of(sh)), rng, range), sh, dt));
  return t;
}

std::vector<Tensor> to_device(const std::vector<Tensor>& ts, Device d) {
  std::vector<Tensor> out;
  for (const auto& t : ts)
    out.push_back(t.to(d));
  return out;
}

double tolerance_for(DType dt) {
  return dt == DType::f32 ? 1e-5 : 1e-2;
}

}  // namespace

std::vector<Result> run_all(const Options& opt,
                            const std::function<void(const Result&)>& on_result) {
  std::vector<Result> results;
  auto report = [&](Result r) {
    on_result(r);
    results.push_back(std::move(r));
  };
  std::mt19937_64 rng(opt.seed);
  const auto diff = differentiable_ops();
  if (opt.cpu) {
    for (const auto& op : diff)
      report({op.name, "fd-grad cpu f32", fd_error(op, rng), 1e-2});
  }
  if (opt.cuda && cuda_available()) {
    const Device gpu = Device::cuda(0);
    for (DType dt : {DType::f32, DType::bf16}) {
      const std::string label = std::string("cuda vs cpu ") + std::string(dtype_name(dt));
      for (const auto& op : diff) {
        auto in = make_inputs(op.inputs, dt, op.input_range, rng);
        auto aux_c = aux_for(op, Device::cpu()), aux_g = aux_for(op, gpu);
        Tensor y_c = op.forward(in, aux_c, {});
        auto in_g = to_device(in, gpu);
        Tensor y_g = op.forward(in_g, aux_g, Stream::default_for(gpu));
        Tensor dy = make_inputs({y_c.shape()}, dt, 1.0f, rng)[0];
        if (op.uniform_cotangent) dy.fill(0.75);
        auto g_c = op.backward(in, aux_c, dy, {});
        auto g_g = op.backward(in_g, aux_g, dy.to(gpu), Stream::default_for(gpu));
        std::vector<Tensor> out_c{y_c}, out_g{y_g};
        out_c.insert(out_c.end(), g_c.begin(), g_c.end());
        out_g.insert(out_g.end(), g_g.begin(), g_g.end());
        report({op.name, label, relative_error(out_g, out_c), tolerance_for(dt)});
      }
      for (const auto& op : plain_ops()) {
        auto in = make_inputs(op.inputs, dt, 1.0f, rng);
        auto r_c = op.run(in, aux_for(op, Device::cpu()), {});
        auto r_g = op.run(to_device(in, gpu), aux_for(op, gpu), Stream::default_for(gpu));
        report({op.name, label, relative_error(r_g, r_c), tolerance_for(dt)});
      }
    }
  }
  return results;
}

}  // namespace zt::selfcheck
