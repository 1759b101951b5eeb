// Kernel benchmark: time and GB/s or TFLOP/s per kernel and size, printed as a table and written as
// JSON, with the targets of the foundation issue evaluated against ceilings measured in the same
// run (bf16 GEMM at 8192^3, device-to-device copy bandwidth).
//   build/bin/kernel_bench [--device cuda|cpu] [--json out.json] [--only substring] [--commit SHA]
#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <optional>

#include "bench/bench_harness.h"
#include "zerotrain/core/tensor.h"
#include "zerotrain/kernels/attention.h"
#if ZT_WITH_CUDA
#include "zerotrain/kernels/cuda/attention.h"
#include "zerotrain/kernels/cuda/cudnn_attention.h"
#endif
#include "zerotrain/kernels/cast.h"
#include "zerotrain/kernels/cross_entropy.h"
#include "zerotrain/kernels/elementwise.h"
#include "zerotrain/kernels/embedding.h"
#include "zerotrain/kernels/gemm.h"
#include "zerotrain/kernels/norm.h"
#include "zerotrain/kernels/random_normal.h"
#include "zerotrain/kernels/reduce.h"
#include "zerotrain/kernels/rope.h"
#include "zerotrain/optim/optimizers.h"

namespace zt::bench {
namespace {

using namespace zt::kernels;

// Uniform values in [-1, 1) from a counter hash: fast for a billion elements, never zeros.
Tensor random_on(const Shape& shape, DType dtype, Device dev, uint64_t seed, Stream s) {
  const int64_t n = numel_of(shape);
  std::vector<float> v(static_cast<size_t>(n));
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    uint64_t x =
        (static_cast<uint64_t>(i) + 1) * 0x9E3779B97F4A7C15ull ^ seed * 0xBF58476D1CE4E5B9ull;
    x ^= x >> 31;
    x *= 0x94D049BB133111EBull;
    x ^= x >> 29;
    v[static_cast<size_t>(i)] = static_cast<float>(x >> 40) / static_cast<float>(1ull << 23) - 1.0f;
  }
  Tensor f = Tensor::wrap(v.data(), shape, DType::f32, Device::cpu()).to(dev, s);
  if (dtype == DType::f32) return f.device().is_cpu() ? f.clone() : f;
  Tensor out = Tensor::empty(shape, dtype, dev, s);
  cast(f, out, s);
  synchronize(s);
  return out;
}

std::string dims(std::initializer_list<int64_t> d) {
  std::string s;
  for (int64_t x : d)
    s += (s.empty() ? "" : "x") + std::to_string(x);
  return s;
}

struct Bench {
  Device dev;
  Stream s;
  bool big;  // GPU sizes; the CPU runs smaller ones
  std::string only;
  std::vector<Row> rows;

  bool wanted(const std::string& name) const {
    return only.empty() || name.find(only) != std::string::npos;
  }

  void add(Row r, const std::function<void()>& fn, int reps = 10) {
    r.ms = time_ms(fn, s, 2, reps);
    std::printf("  %-22s %-24s %9.4f ms\n", r.kernel.c_str(), r.shape.c_str(), r.ms);
    std::fflush(stdout);
    rows.push_back(r);
  }

  void copy() {
    if (!wanted("copy")) return;
    const int64_t n = big ? (1ll << 30) : (64ll << 20);
    Tensor a = random_on({n / 4}, DType::f32, dev, 1, s),
           b = Tensor::empty({n / 4}, DType::f32, dev, s);
    add({"copy", std::to_string(n >> 20) + "MiB", "u8", 0, 2.0 * n, 0},
        [&] { copy_bytes(b.data(), dev, a.data(), dev, static_cast<size_t>(n), s); });
  }

  void gemm_case(const char* name, int64_t m, int64_t n, int64_t k, DType dt, bool trans_b,
                 int reps = 10) {
    if (!wanted("gemm")) return;
    Tensor a = random_on({m, k}, dt, dev, 2, s);
    Tensor b = random_on(trans_b ? Shape{n, k} : Shape{k, n}, dt, dev, 3, s);
    Tensor c = Tensor::empty({m, n}, dt, dev, s);
    GemmOptions o;
    o.trans_b = trans_b;
    add(
        {name, dims({m, n, k}), std::string(dtype_name(dt)), 0, 0, 2.0 * m * n * k},
        [&] { gemm(a, b, c, o, s); }, reps);
  }

  void casts() {
    if (!wanted("cast")) return;
    const int64_t n = big ? (256ll << 20) : (16ll << 20);
    Tensor f = random_on({n}, DType::f32, dev, 4, s), h = Tensor::empty({n}, DType::bf16, dev, s);
    add({"cast_f32_to_bf16", std::to_string(n), "bf16", 0, 6.0 * n, 0}, [&] { cast(f, h, s); });
    add({"cast_bf16_to_f32", std::to_string(n), "bf16", 0, 6.0 * n, 0}, [&] { cast(h, f, s); });
  }

  // The seeded init's generator (kernels/random_normal.h): bytes written per call.
  void random_normals() {
    if (!wanted("random_normal")) return;
    const int64_t n = big ? (256ll << 20) : (16ll << 20);
    Tensor h = Tensor::empty({n}, DType::bf16, dev, s), f = Tensor::empty({n}, DType::f32, dev, s);
    add({"random_normal", std::to_string(n), "bf16", 0, 2.0 * n, 0},
        [&] { random_normal(h, 1234, 7, 0, 0.02f, s); });
    add({"random_normal", std::to_string(n), "f32", 0, 4.0 * n, 0},
        [&] { random_normal(f, 1234, 7, 0, 0.02f, s); });
  }

  void elementwise() {
    const int64_t rows_ = big ? 16384 : 1024, cols = big ? 14336 : 2048;
    if (wanted("add")) {
      Tensor a = random_on({rows_, cols}, DType::bf16, dev, 5, s),
             b = random_on({rows_, cols}, DType::bf16, dev, 6, s);
      Tensor o = Tensor::empty({rows_, cols}, DType::bf16, dev, s);
      add({"add", dims({rows_, cols}), "bf16", 0, 6.0 * rows_ * cols, 0},
          [&] { kernels::add(a, b, o, 1.0f, s); });
    }
    if (wanted("swiglu")) {
      Tensor g = random_on({rows_, cols}, DType::bf16, dev, 7, s),
             u = random_on({rows_, cols}, DType::bf16, dev, 8, s);
      Tensor o = Tensor::empty({rows_, cols}, DType::bf16, dev, s);
      Tensor dg = Tensor::empty({rows_, cols}, DType::bf16, dev, s),
             du = Tensor::empty({rows_, cols}, DType::bf16, dev, s);
      add({"swiglu_fwd", dims({rows_, cols}), "bf16", 0, 6.0 * rows_ * cols, 0},
          [&] { swiglu_forward(g, u, o, s); });
      add({"swiglu_bwd", dims({rows_, cols}), "bf16", 0, 10.0 * rows_ * cols, 0},
          [&] { swiglu_backward(g, u, o, dg, du, s); });
    }
  }

  void norms() {
    const int64_t n = big ? 16384 : 1024, c = big ? 4096 : 1024;
    Tensor x = random_on({n, c}, DType::bf16, dev, 9, s),
           w = random_on({c}, DType::bf16, dev, 10, s);
    Tensor b = random_on({c}, DType::bf16, dev, 11, s),
           y = Tensor::empty({n, c}, DType::bf16, dev, s);
    Tensor dx = Tensor::empty({n, c}, DType::bf16, dev, s),
           dw = Tensor::empty({c}, DType::f32, dev, s);
    Tensor db = Tensor::empty({c}, DType::f32, dev, s);
    Tensor mean = Tensor::empty({n}, DType::f32, dev, s),
           rstd = Tensor::empty({n}, DType::f32, dev, s);
    const double io = 2.0 * n * c * 2;
    if (wanted("rmsnorm")) {
      add({"rmsnorm_fwd", dims({n, c}), "bf16", 0, io, 0},
          [&] { rmsnorm_forward(x, w, y, rstd, 1e-5f, s); });
      add({"rmsnorm_bwd", dims({n, c}), "bf16", 0, 1.5 * io, 0},
          [&] { rmsnorm_backward(x, w, rstd, y, dx, dw, false, s); });
    }
    if (wanted("layernorm")) {
      add({"layernorm_fwd", dims({n, c}), "bf16", 0, io, 0},
          [&] { layernorm_forward(x, w, b, y, mean, rstd, 1e-5f, s); });
      add({"layernorm_bwd", dims({n, c}), "bf16", 0, 1.5 * io, 0},
          [&] { layernorm_backward(x, w, mean, rstd, y, dx, dw, db, false, s); });
    }
  }

  void rope() {
    if (!wanted("rope")) return;
    const int64_t S = big ? 4096 : 512, H = 32, D = 128, B = big ? 2 : 1;
    Tensor x = random_on({B, S, H, D}, DType::bf16, dev, 12, s);
    std::vector<int64_t> pos(static_cast<size_t>(S));
    for (int64_t i = 0; i < S; ++i)
      pos[static_cast<size_t>(i)] = i;
    Tensor p = Tensor::from_ints(pos, {S}, DType::i32, dev);
    Tensor inv = rope_inv_freq(D, 500000.0).to(dev, s);
    add({"rope_fwd", dims({B, S, H, D}), "bf16", 0, 4.0 * B * S * H * D, 0},
        [&] { rope_forward(x, p, inv, x, s); });
  }

  void embedding() {
    if (!wanted("embedding")) return;
    const int64_t n = big ? 16384 : 2048, v = big ? 128256 : 32000, c = big ? 4096 : 512;
    Tensor table = random_on({v, c}, DType::bf16, dev, 13, s);
    std::vector<int64_t> idv(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i)
      idv[static_cast<size_t>(i)] = (i * 7919) % v;
    Tensor ids = Tensor::from_ints(idv, {n}, DType::i32, dev);
    Tensor out = Tensor::empty({n, c}, DType::bf16, dev, s);
    Tensor dtable = Tensor::zeros({v, c}, DType::f32, dev, s);
    add({"embedding_fwd", dims({n, c}), "bf16", 0, 4.0 * n * c, 0},
        [&] { embedding_forward(ids, table, out, false, s); });
    add({"embedding_bwd", dims({n, c}), "bf16", 0, 2.0 * n * c + 8.0 * n * c, 0},
        [&] { embedding_backward(ids, out, dtable, s); });
  }

  void cross_entropy() {
    if (!wanted("cross_entropy")) return;
    const int64_t n = big ? 4096 : 256, v = big ? 128256 : 32000;
    Tensor logits = random_on({n, v}, DType::bf16, dev, 14, s);
    std::vector<int64_t> tv(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i)
      tv[static_cast<size_t>(i)] = (i * 104729) % v;
    Tensor t = Tensor::from_ints(tv, {n}, DType::i32, dev);
    Tensor losses = Tensor::empty({n}, DType::f32, dev, s),
           lse = Tensor::empty({n}, DType::f32, dev, s);
    add({"cross_entropy_fwd", dims({n, v}), "bf16", 0, 2.0 * n * v, 0},
        [&] { cross_entropy_forward(logits, t, losses, lse, -100, s); });
    Tensor work = logits.clone(s);
    add({"cross_entropy_fused", dims({n, v}), "bf16", 0, 6.0 * n * v, 0},
        [&] { cross_entropy_fused(work, t, losses, 1.0f / n, -100, s); });
  }

  void adamw() {
    if (!wanted("adamw")) return;
    const int64_t n = big ? (256ll << 20) : (16ll << 20);
    Tensor p = random_on({n}, DType::f32, dev, 15, s), g = random_on({n}, DType::bf16, dev, 16, s);
    Tensor m = random_on({n}, DType::f32, dev, 17, s), v = random_on({n}, DType::f32, dev, 18, s);
    kernels::scale(v, 0.0f, v, s);
    Tensor copy16 = Tensor::empty({n}, DType::bf16, dev, s);
    // One flat-segment run, as the ZeRO engine steps it (optim::adam_step, AdamW).
    optim::AdamSegment run;
    run.master = static_cast<float*>(p.data());
    run.exp_avg = static_cast<float*>(m.data());
    run.exp_avg_sq = static_cast<float*>(v.data());
    run.grad = g.data();
    run.grad_dtype = DType::bf16;
    run.param_copy = copy16.data();
    run.param_dtype = DType::bf16;
    run.n = n;
    run.weight_decay = 0.1f;
    optim::AdamParams ap;
    ap.lr = 1e-4f;
    optim::StepArgs args;
    // p r/w 8, g 2, m r/w 8, v r/w 8, bf16 copy 2 bytes per parameter.
    add({"adamw", std::to_string(n), "f32+bf16", 0, 28.0 * n, 0}, [&] {
      optim::adam_step({&run, 1}, ap, args, dev, s);
      ++args.step;
    });
  }

  void l2norm() {
    if (!wanted("l2norm")) return;
    const int64_t total = big ? (256ll << 20) : (16ll << 20);
    std::vector<Tensor> xs;
    for (int i = 0; i < 64; ++i)
      xs.push_back(random_on({total / 64 + i}, DType::bf16, dev, 100 + i, s));
    Tensor out = Tensor::empty({1}, DType::f32, dev, s);
    add({"global_l2_norm", "64 tensors, " + std::to_string(total), "bf16", 0, 2.0 * total, 0},
        [&] { global_l2_norm(xs, out, s); });
  }

  void attention() {
    if (!wanted("attention")) return;
    const int64_t B = 1, S = big ? 4096 : 256, Hq = 32, Hkv = 8, D = 128;
    Tensor q = random_on({B, S, Hq, D}, DType::bf16, dev, 19, s),
           k = random_on({B, S, Hkv, D}, DType::bf16, dev, 20, s);
    Tensor v = random_on({B, S, Hkv, D}, DType::bf16, dev, 21, s),
           o = Tensor::empty({B, S, Hq, D}, DType::bf16, dev, s);
    Tensor lse = Tensor::empty({B, Hq, S}, DType::f32, dev, s),
           dout = random_on({B, S, Hq, D}, DType::bf16, dev, 22, s);
    Tensor dq = Tensor::empty(q.shape(), DType::bf16, dev, s),
           dk = Tensor::empty(k.shape(), DType::bf16, dev, s);
    Tensor dv = Tensor::empty(v.shape(), DType::bf16, dev, s);
    // Causal attention FLOPs as ../shared/DEVICE.md counts them: 4 S^2 D H / 2 forward, x2.5
    // backward. On CUDA both paths run, each line labelled: cuDNN's fused attention and ours.
    const double fwd = 4.0 * S * S * D * Hq / 2 * B;
    const std::string shape = dims({B, S, Hq, D});
    if (dev.is_cpu()) {
      add({"attention_fwd cpu", shape, "bf16", 0, 0, fwd},
          [&] { attention_forward(q, k, v, o, lse, {}, s); });
      add({"attention_bwd cpu", shape, "bf16", 0, 0, 2.5 * fwd},
          [&] { attention_backward(q, k, v, o, lse, dout, dq, dk, dv, {}, s); });
      return;
    }
#if ZT_WITH_CUDA
    const AttentionOptions opt{1.0f / std::sqrt(static_cast<float>(D)), 0, {}};
    std::string why_not = cuda::cudnn_attention_unsupported(q, k, opt);
    for (AttentionPass pass : {AttentionPass::forward, AttentionPass::backward})
      if (why_not.empty()) why_not = cuda::cudnn_attention_prepare(q, k, opt, pass);
    if (why_not.empty()) {
      std::printf("  attention cudnn: cuDNN %lld at run time\n",
                  static_cast<long long>(cuda::cudnn_runtime_version()));
      add({"attention_fwd cudnn", shape, "bf16", 0, 0, fwd},
          [&] { cuda::cudnn_attention_forward(q, k, v, o, lse, opt, s); });
      add({"attention_bwd cudnn", shape, "bf16", 0, 0, 2.5 * fwd},
          [&] { cuda::cudnn_attention_backward(q, k, v, o, lse, dout, dq, dk, dv, opt, s); });
    } else {
      std::printf("  attention cudnn skipped: %s\n", why_not.c_str());
    }
    add({"attention_fwd native", shape, "bf16", 0, 0, fwd},
        [&] { cuda::native_attention_forward(q, k, v, o, lse, opt, s); });
    add({"attention_bwd native", shape, "bf16", 0, 0, 2.5 * fwd},
        [&] { cuda::native_attention_backward(q, k, v, o, lse, dout, dq, dk, dv, opt, s); });
#endif
  }
};

const Row* find(const std::vector<Row>& rows, const std::string& kernel,
                const std::string& shape = "") {
  for (const auto& r : rows)
    if (r.kernel == kernel && (shape.empty() || r.shape == shape)) return &r;
  return nullptr;
}

}  // namespace
}  // namespace zt::bench

int main(int argc, char** argv) {
  using namespace zt;
  using namespace zt::bench;
  CLI::App app{"Kernel benchmark: time and GB/s or TFLOP/s per kernel and size (table + JSON)"};
  std::string device = cuda_available() ? "cuda" : "cpu", json_path, only, commit = ZT_GIT_COMMIT;
  app.add_option("--device", device, "cuda or cpu (default: cuda when a GPU is visible)");
  app.add_option("--json", json_path, "write the results to this JSON file");
  app.add_option("--only", only, "run only kernels whose name contains this");
  app.add_option("--commit", commit, "commit recorded in the JSON (default: the build's)");
  CLI11_PARSE(app, argc, argv);
  try {
    const Device dev = parse_device(device);
    std::optional<CudaStream> owned;
    Stream s;
    if (dev.is_cuda()) {
      owned.emplace(dev);
      s = owned->get();
    }
    Bench b{dev, s, dev.is_cuda(), only, {}};
    std::printf("kernel_bench on %s\n",
                dev.is_cuda() ? cuda_device_name(dev.index).c_str() : "cpu");
    b.copy();
    if (b.big) {
      b.gemm_case("gemm", 8192, 8192, 8192, DType::bf16, false, 20);
      b.gemm_case("gemm", 4096, 4096, 4096, DType::bf16, false, 50);
      b.gemm_case("gemm_qkv", 4096, 6144, 4096, DType::bf16, true);
      b.gemm_case("gemm_o", 4096, 4096, 4096, DType::bf16, true);
      b.gemm_case("gemm_gate_up", 4096, 28672, 4096, DType::bf16, true);
      b.gemm_case("gemm_down", 4096, 4096, 14336, DType::bf16, true);
      b.gemm_case("gemm_lm_head", 4096, 128256, 4096, DType::bf16, true);
      b.gemm_case("gemm", 4096, 4096, 4096, DType::f32, false);
    } else {
      b.gemm_case("gemm", 512, 512, 512, DType::f32, false);
      b.gemm_case("gemm", 512, 512, 512, DType::bf16, false);
    }
    b.casts();
    b.random_normals();
    b.elementwise();
    b.norms();
    b.rope();
    b.embedding();
    b.cross_entropy();
    b.adamw();
    b.l2norm();
    b.attention();

    std::printf("\n");
    print_table(b.rows);

    nlohmann::json j;
    j["device"] = dev.is_cuda() ? cuda_device_name(dev.index) : "cpu";
    j["commit"] = commit;
    std::string cmd;
    for (int i = 0; i < argc; ++i)
      cmd += (i ? " " : "") + std::string(argv[i]);
    j["command"] = cmd;
    for (const auto& r : b.rows)
      j["results"].push_back(to_json(r));

    // Targets of the foundation issue, against ceilings measured in this run.
    std::printf("\ntargets\n");
    auto target = [&](const std::string& name, double value, double goal) {
      const bool ok = value >= goal;
      std::printf("  %-44s %6.3f (>= %.2f) %s\n", name.c_str(), value, goal, ok ? "ok" : "MISSED");
      j["targets"][name] = {{"value", value}, {"goal", goal}, {"met", ok}};
    };
    const Row* g8 = find(b.rows, "gemm", "8192x8192x8192");
    const Row* g4 = find(b.rows, "gemm", "4096x4096x4096");
    if (g8 && g4 && g4->dtype == "bf16")
      target("gemm_bf16_4096_over_8192", g4->tflops() / g8->tflops(), 0.90);
    if (const Row* cp = find(b.rows, "copy")) {
      j["copy_gbps"] = cp->gbps();
      for (const char* k : {"rmsnorm_fwd", "cast_f32_to_bf16", "cast_bf16_to_f32", "adamw"})
        if (const Row* r = find(b.rows, k))
          target(std::string(k) + "_over_copy_bw", r->gbps() / cp->gbps(), 0.70);
    }
    // Issue 14's attention targets (1x4096x32x128 causal bf16): forward, and forward + backward.
    for (const char* path : {"cudnn", "native"}) {
      const Row* f = find(b.rows, str("attention_fwd ", path));
      const Row* bw = find(b.rows, str("attention_bwd ", path));
      if (!b.big || !f || !bw) continue;
      target(str("attention_fwd_", path, "_tflops"), f->tflops(), 500);
      target(str("attention_fwd_bwd_", path, "_tflops"),
             (f->flops + bw->flops) / ((f->ms + bw->ms) * 1e-3) / 1e12, 420);
    }
    if (!json_path.empty()) {
      std::ofstream(json_path) << j.dump(2) << "\n";
      std::printf("wrote %s\n", json_path.c_str());
    }
  } catch (const zt::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  return 0;
}
