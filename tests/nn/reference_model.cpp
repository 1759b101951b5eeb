#include "nn/reference_model.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>

namespace zt::test {

namespace {

using Vec = std::vector<double>;
using nn::Family;
using nn::ModelConfig;

const Vec& get(const RefParams& p, const std::string& name) {
  auto it = p.find(name);
  if (it == p.end()) throw std::runtime_error("reference model: missing parameter " + name);
  return it->second;
}
bool has(const RefParams& p, const std::string& name) {
  return p.count(name) != 0;
}

// x: [n, in]; HF nn.Linear weight [out, in] (conv1d: [in, out]); optional bias [out].
Vec linear(const Vec& x, int64_t n, int64_t in, int64_t out, const Vec& w, const Vec* b,
           bool conv1d) {
  Vec y(static_cast<size_t>(n * out));
  for (int64_t r = 0; r < n; ++r)
    for (int64_t o = 0; o < out; ++o) {
      double s = b ? (*b)[static_cast<size_t>(o)] : 0.0;
      for (int64_t i = 0; i < in; ++i)
        s += x[static_cast<size_t>(r * in + i)] *
             (conv1d ? w[static_cast<size_t>(i * out + o)] : w[static_cast<size_t>(o * in + i)]);
      y[static_cast<size_t>(r * out + o)] = s;
    }
  return y;
}

Vec norm(const Vec& x, int64_t n, int64_t c, const Vec& w, const Vec* b, double eps, bool layer) {
  Vec y(x.size());
  for (int64_t r = 0; r < n; ++r) {
    const double* row = &x[static_cast<size_t>(r * c)];
    double mean = 0, var = 0;
    if (layer) {
      for (int64_t i = 0; i < c; ++i)
        mean += row[i];
      mean /= static_cast<double>(c);
    }
    for (int64_t i = 0; i < c; ++i)
      var += (row[i] - mean) * (row[i] - mean);
    var /= static_cast<double>(c);
    const double rstd = 1.0 / std::sqrt(var + eps);
    for (int64_t i = 0; i < c; ++i)
      y[static_cast<size_t>(r * c + i)] = (row[i] - mean) * rstd * w[static_cast<size_t>(i)] +
                                          (b ? (*b)[static_cast<size_t>(i)] : 0.0);
  }
  return y;
}

// x: [B, S, H, D] rotated in place ("rotate half").
void rope(Vec& x, int64_t B, int64_t S, int64_t H, int64_t D, const Vec& inv_freq) {
  const int64_t half = D / 2;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t s = 0; s < S; ++s)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t i = 0; i < half; ++i) {
          const double a = static_cast<double>(s) * inv_freq[static_cast<size_t>(i)];
          double& x1 = x[static_cast<size_t>(((b * S + s) * H + h) * D + i)];
          double& x2 = x[static_cast<size_t>(((b * S + s) * H + h) * D + i + half)];
          const double y1 = x1 * std::cos(a) - x2 * std::sin(a);
          const double y2 = x2 * std::cos(a) + x1 * std::sin(a);
          x1 = y1;
          x2 = y2;
        }
}

// q: [B, S, Hq, D], k, v: [B, S, Hkv, D] -> [B, S, Hq, D]. Key j visible from query i iff j <= i
// and (window == 0 or i - j < window).
Vec attention(const Vec& q, const Vec& k, const Vec& v, int64_t B, int64_t S, int64_t Hq,
              int64_t Hkv, int64_t D, int64_t window) {
  Vec out(q.size(), 0.0);
  const double scale = 1.0 / std::sqrt(static_cast<double>(D));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < Hq; ++h) {
      const int64_t g = h / (Hq / Hkv);
      for (int64_t i = 0; i < S; ++i) {
        Vec score(static_cast<size_t>(S), -INFINITY);
        double mx = -INFINITY;
        for (int64_t j = 0; j <= i; ++j) {
          if (window > 0 && i - j >= window) continue;
          double s = 0;
          for (int64_t d = 0; d < D; ++d)
            s += q[static_cast<size_t>(((b * S + i) * Hq + h) * D + d)] *
                 k[static_cast<size_t>(((b * S + j) * Hkv + g) * D + d)];
          score[static_cast<size_t>(j)] = s * scale;
          mx = std::max(mx, s * scale);
        }
        double z = 0;
        for (int64_t j = 0; j <= i; ++j)
          z += std::exp(score[static_cast<size_t>(j)] - mx);
        for (int64_t j = 0; j <= i; ++j) {
          const double pj = std::exp(score[static_cast<size_t>(j)] - mx) / z;
          for (int64_t d = 0; d < D; ++d)
            out[static_cast<size_t>(((b * S + i) * Hq + h) * D + d)] +=
                pj * v[static_cast<size_t>(((b * S + j) * Hkv + g) * D + d)];
        }
      }
    }
  return out;
}

double gelu_tanh(double x) {
  return 0.5 * x *
         (1.0 + std::tanh(std::sqrt(2.0 / std::numbers::pi) * (x + 0.044715 * x * x * x)));
}
double silu(double x) {
  return x / (1.0 + std::exp(-x));
}

void add_into(Vec& a, const Vec& b) {
  for (size_t i = 0; i < a.size(); ++i)
    a[i] += b[i];
}

}  // namespace

Vec reference_inv_freq(const ModelConfig& c) {
  const int64_t half = c.head_dim / 2;
  Vec f(static_cast<size_t>(half));
  for (int64_t i = 0; i < half; ++i)
    f[static_cast<size_t>(i)] =
        1.0 / std::pow(c.rope_theta, static_cast<double>(2 * i) / static_cast<double>(c.head_dim));
  const auto& r = c.rope_scaling;
  if (r.factor == 0) return f;
  const double old_len = static_cast<double>(r.original_max_position_embeddings);
  const double low_wavelen = old_len / r.low_freq_factor,
               high_wavelen = old_len / r.high_freq_factor;
  for (double& x : f) {
    const double wavelen = 2 * std::numbers::pi / x;
    if (wavelen < high_wavelen) continue;
    if (wavelen > low_wavelen) {
      x /= r.factor;
      continue;
    }
    const double smooth =
        (old_len / wavelen - r.low_freq_factor) / (r.high_freq_factor - r.low_freq_factor);
    x = (1 - smooth) * x / r.factor + smooth * x;
  }
  return f;
}

RefOutput reference_forward(const ModelConfig& c, const RefParams& p,
                            const std::vector<int64_t>& tokens, const std::vector<int64_t>& targets,
                            int64_t B, int64_t S) {
  const bool gpt2 = c.family == Family::gpt2;
  const int64_t C = c.hidden_size, N = B * S, V = c.vocab_size, D = c.head_dim;
  const int64_t Hq = c.num_heads, Hkv = c.num_kv_heads, I = c.intermediate_size;
  const std::string root = gpt2 ? "transformer." : "model.";
  const Vec& wte = get(p, root + (gpt2 ? "wte.weight" : "embed_tokens.weight"));

  Vec x(static_cast<size_t>(N * C));
  for (int64_t t = 0; t < N; ++t)
    for (int64_t i = 0; i < C; ++i) {
      double e = wte[static_cast<size_t>(tokens[static_cast<size_t>(t)] * C + i)];
      if (gpt2) e += get(p, "transformer.wpe.weight")[static_cast<size_t>((t % S) * C + i)];
      x[static_cast<size_t>(t * C + i)] = e;
    }

  const Vec inv_freq = gpt2 ? Vec{} : reference_inv_freq(c);
  const int64_t window =
      (c.family == Family::mistral || c.family == Family::qwen2) ? c.sliding_window : 0;
  auto opt = [&](const std::string& name) { return has(p, name) ? &get(p, name) : nullptr; };
  for (int64_t l = 0; l < c.num_layers; ++l) {
    const std::string pre = root + (gpt2 ? "h." : "layers.") + std::to_string(l) + ".";
    const std::string n1 = pre + (gpt2 ? "ln_1" : "input_layernorm");
    const std::string n2 = pre + (gpt2 ? "ln_2" : "post_attention_layernorm");
    Vec h = norm(x, N, C, get(p, n1 + ".weight"), opt(n1 + ".bias"), c.norm_eps, gpt2);
    Vec q, k, v, attn;
    if (gpt2) {
      Vec qkv = linear(h, N, C, 3 * C, get(p, pre + "attn.c_attn.weight"),
                       &get(p, pre + "attn.c_attn.bias"), true);
      q.resize(static_cast<size_t>(N * C));
      k = v = q;
      for (int64_t t = 0; t < N; ++t)
        for (int64_t i = 0; i < C; ++i) {
          q[static_cast<size_t>(t * C + i)] = qkv[static_cast<size_t>(t * 3 * C + i)];
          k[static_cast<size_t>(t * C + i)] = qkv[static_cast<size_t>(t * 3 * C + C + i)];
          v[static_cast<size_t>(t * C + i)] = qkv[static_cast<size_t>(t * 3 * C + 2 * C + i)];
        }
      attn = attention(q, k, v, B, S, Hq, Hkv, D, 0);
      attn = linear(attn, N, C, C, get(p, pre + "attn.c_proj.weight"),
                    &get(p, pre + "attn.c_proj.bias"), true);
    } else {
      const std::string a = pre + "self_attn.";
      q = linear(h, N, C, Hq * D, get(p, a + "q_proj.weight"), opt(a + "q_proj.bias"), false);
      k = linear(h, N, C, Hkv * D, get(p, a + "k_proj.weight"), opt(a + "k_proj.bias"), false);
      v = linear(h, N, C, Hkv * D, get(p, a + "v_proj.weight"), opt(a + "v_proj.bias"), false);
      rope(q, B, S, Hq, D, inv_freq);
      rope(k, B, S, Hkv, D, inv_freq);
      attn = attention(q, k, v, B, S, Hq, Hkv, D, window);
      attn = linear(attn, N, Hq * D, C, get(p, a + "o_proj.weight"), opt(a + "o_proj.bias"), false);
    }
    add_into(x, attn);
    h = norm(x, N, C, get(p, n2 + ".weight"), opt(n2 + ".bias"), c.norm_eps, gpt2);
    Vec m;
    if (gpt2) {
      Vec f =
          linear(h, N, C, I, get(p, pre + "mlp.c_fc.weight"), &get(p, pre + "mlp.c_fc.bias"), true);
      for (double& z : f)
        z = gelu_tanh(z);
      m = linear(f, N, I, C, get(p, pre + "mlp.c_proj.weight"), &get(p, pre + "mlp.c_proj.bias"),
                 true);
    } else {
      const std::string a = pre + "mlp.";
      Vec g = linear(h, N, C, I, get(p, a + "gate_proj.weight"), opt(a + "gate_proj.bias"), false);
      const Vec u =
          linear(h, N, C, I, get(p, a + "up_proj.weight"), opt(a + "up_proj.bias"), false);
      for (size_t i = 0; i < g.size(); ++i)
        g[i] = silu(g[i]) * u[i];
      m = linear(g, N, I, C, get(p, a + "down_proj.weight"), opt(a + "down_proj.bias"), false);
    }
    add_into(x, m);
  }
  const std::string fn = root + (gpt2 ? "ln_f" : "norm");
  const Vec h = norm(x, N, C, get(p, fn + ".weight"), opt(fn + ".bias"), c.norm_eps, gpt2);
  const Vec& head = c.tie_word_embeddings ? wte : get(p, "lm_head.weight");

  RefOutput r;
  r.logits = linear(h, N, C, V, head, nullptr, false);
  double total = 0;
  int64_t valid = 0;
  for (int64_t t = 0; t < N; ++t) {
    const int64_t y = targets[static_cast<size_t>(t)];
    if (y == -100) continue;
    const double* row = &r.logits[static_cast<size_t>(t * V)];
    const double mx = *std::max_element(row, row + V);
    double z = 0;
    for (int64_t j = 0; j < V; ++j)
      z += std::exp(row[j] - mx);
    total += std::log(z) + mx - row[y];
    ++valid;
  }
  r.loss = valid ? total / static_cast<double>(valid) : 0.0;
  return r;
}

}  // namespace zt::test
