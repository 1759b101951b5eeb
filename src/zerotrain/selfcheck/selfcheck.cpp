// Runs the self-check: finite differences on the CPU, CUDA against CPU when a GPU is visible.
#include "zerotrain/selfcheck/selfcheck.h"

#include <cmath>
#include <random>

#include "zerotrain/core/stream.h"
#include "zerotrain/core/tensor.h"
#include "zerotrain/selfcheck/diff_ops.h"

namespace zt::selfcheck {

namespace {

std::vector<float> uniform(size_t n, std::mt19937_64& rng, float range) {
  std::uniform_real_distribution<float> d(-range, range);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

double dot(const std::vector<float>& a, const std::vector<float>& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += static_cast<double>(a[i]) * b[i];
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

// Directional finite differences of L(x) = <g, forward(x)> against the analytic backward, worst
// of three random directions, as |analytic - numeric| / (|analytic| + 0.1 ||grad|| + 1e-6).
double fd_error(const DiffOp& op, std::mt19937_64& rng) {
  const Device cpu = Device::cpu();
  std::vector<std::vector<float>> x;
  for (const auto& sh : op.inputs) x.push_back(uniform(static_cast<size_t>(numel_of(sh)), rng, op.input_range));
  auto aux = op.make_aux(cpu);
  auto tensors = [&](const std::vector<std::vector<float>>& v) {
    std::vector<Tensor> t;
    for (size_t k = 0; k < v.size(); ++k) t.push_back(Tensor::from_floats(v[k], op.inputs[k], DType::f32));
    return t;
  };
  Tensor y0 = op.forward(tensors(x), aux, {});
  std::vector<float> g = uniform(static_cast<size_t>(y0.numel()), rng, 1.0f);
  if (op.uniform_cotangent) std::fill(g.begin(), g.end(), 0.75f);
  auto grads = op.backward(tensors(x), aux, Tensor::from_floats(g, y0.shape(), DType::f32), {});
  auto loss = [&](const std::vector<std::vector<float>>& v) { return dot(g, op.forward(tensors(v), aux, {}).to_floats()); };

  double gnorm2 = 0;
  std::vector<std::vector<float>> gv;
  for (auto& t : grads) {
    gv.push_back(t.to_floats());
    for (float z : gv.back()) gnorm2 += static_cast<double>(z) * z;
  }
  std::normal_distribution<double> nd;
  double worst = 0;
  const double h = 1e-2;
  for (int dir = 0; dir < 3; ++dir) {
    std::vector<std::vector<float>> u;
    double n2 = 0;
    for (auto& xi : x) {
      u.emplace_back(xi.size());
      for (auto& z : u.back()) {
        z = static_cast<float>(nd(rng));
        n2 += static_cast<double>(z) * z;
      }
    }
    double analytic = 0;
    for (size_t k = 0; k < u.size(); ++k) {
      for (auto& z : u[k]) z = static_cast<float>(z / std::sqrt(n2));
      analytic += dot(gv[k], u[k]);
    }
    auto shifted = [&](double sgn) {
      auto v = x;
      for (size_t k = 0; k < v.size(); ++k)
        for (size_t i = 0; i < v[k].size(); ++i) v[k][i] = static_cast<float>(v[k][i] + sgn * h * u[k][i]);
      return loss(v);
    };
    const double numeric = (shifted(1) - shifted(-1)) / (2 * h);
    const double err = std::fabs(analytic - numeric) / (std::fabs(analytic) + 0.1 * std::sqrt(gnorm2) + 1e-6);
    if (!(err <= worst)) worst = err;  // keeps NaN
  }
  return worst;
}

std::vector<Tensor> make_inputs(const std::vector<Shape>& shapes, DType dt, float range, std::mt19937_64& rng) {
  std::vector<Tensor> t;
  for (const auto& sh : shapes) t.push_back(Tensor::from_floats(uniform(static_cast<size_t>(numel_of(sh)), rng, range), sh, dt));
  return t;
}

std::vector<Tensor> to_device(const std::vector<Tensor>& ts, Device d) {
  std::vector<Tensor> out;
  for (const auto& t : ts) out.push_back(t.to(d));
  return out;
}

double tolerance_for(DType dt) { return dt == DType::f32 ? 1e-5 : 1e-2; }

}  // namespace

std::vector<Result> run_all(const Options& opt, const std::function<void(const Result&)>& on_result) {
  std::vector<Result> results;
  auto report = [&](Result r) {
    on_result(r);
    results.push_back(std::move(r));
  };
  std::mt19937_64 rng(opt.seed);
  const auto diff = differentiable_ops();
  if (opt.cpu) {
    for (const auto& op : diff) report({op.name, "fd-grad cpu f32", fd_error(op, rng), 1e-2});
  }
  if (opt.cuda && cuda_available()) {
    const Device gpu = Device::cuda(0);
    for (DType dt : {DType::f32, DType::bf16}) {
      const std::string label = std::string("cuda vs cpu ") + std::string(dtype_name(dt));
      for (const auto& op : diff) {
        auto in = make_inputs(op.inputs, dt, op.input_range, rng);
        auto aux_c = op.make_aux(Device::cpu()), aux_g = op.make_aux(gpu);
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
        auto r_c = op.run(in, op.make_aux(Device::cpu()), {});
        auto r_g = op.run(to_device(in, gpu), op.make_aux(gpu), Stream::default_for(gpu));
        report({op.name, label, relative_error(r_g, r_c), tolerance_for(dt)});
      }
    }
  }
  return results;
}

}  // namespace zt::selfcheck
