// The kernels the self-check exercises, wrapped as DiffOp / PlainOp. Small odd sizes on purpose.
#include "zerotrain/selfcheck/diff_ops.h"

#include "zerotrain/kernels/attention.h"
#include "zerotrain/kernels/cast.h"
#include "zerotrain/kernels/cross_entropy.h"
#include "zerotrain/kernels/elementwise.h"
#include "zerotrain/kernels/embedding.h"
#include "zerotrain/kernels/gemm.h"
#include "zerotrain/kernels/norm.h"
#include "zerotrain/kernels/reduce.h"
#include "zerotrain/kernels/rope.h"
#include "zerotrain/optim/optimizers.h"

namespace zt::selfcheck {

namespace k = zt::kernels;

namespace {
Tensor like(const Tensor& t, Stream s) {
  return Tensor::empty(t.shape(), t.dtype(), t.device(), s);
}
Tensor f32_on(const Tensor& t, int64_t n, Stream s) {
  return Tensor::empty({n}, DType::f32, t.device(), s);
}

DiffOp unary(const std::string& name, void (*fwd)(const Tensor&, Tensor&, Stream),
             void (*bwd)(const Tensor&, const Tensor&, Tensor&, Stream)) {
  DiffOp op;
  op.name = name;
  op.inputs = {{257}};
  op.input_range = 3.0f;
  op.forward = [fwd](const auto& in, const auto&, Stream s) {
    Tensor y = like(in[0], s);
    fwd(in[0], y, s);
    return y;
  };
  op.backward = [bwd](const auto& in, const auto&, const Tensor& dy, Stream s) {
    Tensor dx = like(in[0], s);
    bwd(in[0], dy, dx, s);
    return std::vector<Tensor>{dx};
  };
  return op;
}
}  // namespace

std::vector<DiffOp> differentiable_ops() {
  std::vector<DiffOp> ops;

  ops.push_back({"gemm",
                 {{7, 5}, {5, 6}},
                 {},
                 [](const auto& in, const auto&, Stream s) {
                   Tensor c = Tensor::empty({7, 6}, in[0].dtype(), in[0].device(), s);
                   k::gemm(in[0], in[1], c, {}, s);
                   return c;
                 },
                 [](const auto& in, const auto&, const Tensor& dc, Stream s) {
                   Tensor da = like(in[0], s), db = like(in[1], s);
                   k::GemmOptions ta, tb;
                   tb.trans_b = true;  // da = dc @ b^T
                   ta.trans_a = true;  // db = a^T @ dc
                   k::gemm(dc, in[1], da, tb, s);
                   k::gemm(in[0], dc, db, ta, s);
                   return std::vector<Tensor>{da, db};
                 }});

  ops.push_back(unary("gelu_tanh", k::gelu_tanh_forward, k::gelu_tanh_backward));
  ops.push_back(unary("silu", k::silu_forward, k::silu_backward));

  DiffOp swiglu;
  swiglu.name = "swiglu";
  swiglu.inputs = {{129}, {129}};
  swiglu.input_range = 3.0f;
  swiglu.forward = [](const auto& in, const auto&, Stream s) {
    Tensor y = like(in[0], s);
    k::swiglu_forward(in[0], in[1], y, s);
    return y;
  };
  swiglu.backward = [](const auto& in, const auto&, const Tensor& dy, Stream s) {
    Tensor dg = like(in[0], s), du = like(in[1], s);
    k::swiglu_backward(in[0], in[1], dy, dg, du, s);
    return std::vector<Tensor>{dg, du};
  };
  ops.push_back(swiglu);

  DiffOp rms;
  rms.name = "rmsnorm";
  rms.inputs = {{6, 33}, {33}};
  rms.forward = [](const auto& in, const auto&, Stream s) {
    Tensor y = like(in[0], s), rstd = f32_on(in[0], 6, s);
    k::rmsnorm_forward(in[0], in[1], y, rstd, 1e-5f, s);
    return y;
  };
  rms.backward = [](const auto& in, const auto&, const Tensor& dy, Stream s) {
    Tensor y = like(in[0], s), rstd = f32_on(in[0], 6, s), dx = like(in[0], s), dw = like(in[1], s);
    k::rmsnorm_forward(in[0], in[1], y, rstd, 1e-5f, s);
    k::rmsnorm_backward(in[0], in[1], rstd, dy, dx, dw, false, s);
    return std::vector<Tensor>{dx, dw};
  };
  ops.push_back(rms);

  DiffOp ln;
  ln.name = "layernorm";
  ln.inputs = {{6, 33}, {33}, {33}};
  ln.forward = [](const auto& in, const auto&, Stream s) {
    Tensor y = like(in[0], s), mean = f32_on(in[0], 6, s), rstd = f32_on(in[0], 6, s);
    k::layernorm_forward(in[0], in[1], in[2], y, mean, rstd, 1e-5f, s);
    return y;
  };
  ln.backward = [](const auto& in, const auto&, const Tensor& dy, Stream s) {
    Tensor y = like(in[0], s), mean = f32_on(in[0], 6, s), rstd = f32_on(in[0], 6, s);
    Tensor dx = like(in[0], s), dw = like(in[1], s), db = like(in[2], s);
    k::layernorm_forward(in[0], in[1], in[2], y, mean, rstd, 1e-5f, s);
    k::layernorm_backward(in[0], in[1], mean, rstd, dy, dx, dw, db, false, s);
    return std::vector<Tensor>{dx, dw, db};
  };
  ops.push_back(ln);

  DiffOp rope;
  rope.name = "rope";
  rope.inputs = {{2, 5, 3, 8}};
  rope.make_aux = [](Device d) {
    return std::vector<Tensor>{Tensor::from_ints({0, 1, 2, 7, 40}, {5}, DType::i64, d),
                               k::rope_inv_freq(8, 10000.0).to(d)};
  };
  rope.forward = [](const auto& in, const auto& aux, Stream s) {
    Tensor y = like(in[0], s);
    k::rope_forward(in[0], aux[0], aux[1], y, s);
    return y;
  };
  rope.backward = [](const auto& in, const auto& aux, const Tensor& dy, Stream s) {
    Tensor dx = like(in[0], s);
    k::rope_backward(dy, aux[0], aux[1], dx, s);
    return std::vector<Tensor>{dx};
  };
  ops.push_back(rope);

  DiffOp attn;
  attn.name = "attention";
  attn.inputs = {{1, 9, 4, 32}, {1, 9, 2, 32}, {1, 9, 2, 32}};
  attn.forward = [](const auto& in, const auto&, Stream s) {
    Tensor o = like(in[0], s), lse = Tensor::empty({1, 4, 9}, DType::f32, in[0].device(), s);
    k::attention_forward(in[0], in[1], in[2], o, lse, {}, s);
    return o;
  };
  attn.backward = [](const auto& in, const auto&, const Tensor& dout, Stream s) {
    Tensor o = like(in[0], s), lse = Tensor::empty({1, 4, 9}, DType::f32, in[0].device(), s);
    k::attention_forward(in[0], in[1], in[2], o, lse, {}, s);
    Tensor dq = like(in[0], s), dk = like(in[1], s), dv = like(in[2], s);
    k::attention_backward(in[0], in[1], in[2], o, lse, dout, dq, dk, dv, {}, s);
    return std::vector<Tensor>{dq, dk, dv};
  };
  ops.push_back(attn);

  // Packed rows: documents of 3, 1 and 5 tokens ([Note: packed documents] in nn/row_documents.h).
  DiffOp packed = attn;
  packed.name = "attention_packed";
  packed.make_aux = [](Device d) {
    return std::vector<Tensor>{
        Tensor::from_ints({0, 0, 0, 3, 4, 4, 4, 4, 4}, {1, 9}, DType::i32, d)};
  };
  packed.forward = [](const auto& in, const auto& aux, Stream s) {
    k::AttentionOptions opt;
    opt.doc_starts = aux[0];
    Tensor o = like(in[0], s), lse = Tensor::empty({1, 4, 9}, DType::f32, in[0].device(), s);
    k::attention_forward(in[0], in[1], in[2], o, lse, opt, s);
    return o;
  };
  packed.backward = [](const auto& in, const auto& aux, const Tensor& dout, Stream s) {
    k::AttentionOptions opt;
    opt.doc_starts = aux[0];
    Tensor o = like(in[0], s), lse = Tensor::empty({1, 4, 9}, DType::f32, in[0].device(), s);
    k::attention_forward(in[0], in[1], in[2], o, lse, opt, s);
    Tensor dq = like(in[0], s), dk = like(in[1], s), dv = like(in[2], s);
    k::attention_backward(in[0], in[1], in[2], o, lse, dout, dq, dk, dv, opt, s);
    return std::vector<Tensor>{dq, dk, dv};
  };
  ops.push_back(packed);

  DiffOp xent;
  xent.name = "cross_entropy";
  xent.inputs = {{5, 37}};
  xent.input_range = 4.0f;
  xent.uniform_cotangent = true;
  xent.make_aux = [](Device d) {
    return std::vector<Tensor>{Tensor::from_ints({3, 0, 36, -100, 17}, {5}, DType::i64, d)};
  };
  xent.forward = [](const auto& in, const auto& aux, Stream s) {
    Tensor losses = f32_on(in[0], 5, s), lse = f32_on(in[0], 5, s);
    k::cross_entropy_forward(in[0], aux[0], losses, lse, -100, s);
    return losses;
  };
  xent.backward = [](const auto& in, const auto& aux, const Tensor& dl, Stream s) {
    Tensor losses = f32_on(in[0], 5, s), lse = f32_on(in[0], 5, s), dlogits = like(in[0], s);
    k::cross_entropy_forward(in[0], aux[0], losses, lse, -100, s);
    const float scale = dl.to_floats(s)[0];
    k::cross_entropy_backward(in[0], aux[0], lse, dlogits, scale, -100, s);
    return std::vector<Tensor>{dlogits};
  };
  ops.push_back(xent);

  DiffOp emb;
  emb.name = "embedding";
  emb.inputs = {{11, 7}};
  emb.make_aux = [](Device d) {
    return std::vector<Tensor>{Tensor::from_ints({3, 0, 3, 10, 5, 3, 0, 9, 1}, {9}, DType::i32, d)};
  };
  emb.forward = [](const auto& in, const auto& aux, Stream s) {
    Tensor out = Tensor::empty({9, 7}, in[0].dtype(), in[0].device(), s);
    k::embedding_forward(aux[0], in[0], out, true, s);
    return out;
  };
  emb.backward = [](const auto& in, const auto& aux, const Tensor& dout, Stream s) {
    Tensor dt = Tensor::zeros(in[0].shape(), DType::f32, in[0].device(), s);
    k::embedding_backward(aux[0], dout, dt, s);
    return std::vector<Tensor>{dt};
  };
  ops.push_back(emb);
  return ops;
}

std::vector<PlainOp> plain_ops() {
  std::vector<PlainOp> ops;
  ops.push_back({"cast", {{1001}}, {}, [](const auto& in, const auto&, Stream s) {
                   Tensor h = Tensor::empty(in[0].shape(), DType::f16, in[0].device(), s);
                   k::cast(in[0], h, s);
                   return std::vector<Tensor>{h};
                 }});
  ops.push_back({"reductions", {{37, 29}, {1000}}, {}, [](const auto& in, const auto&, Stream s) {
                   const Device d = in[0].device();
                   Tensor sum = Tensor::empty({1}, DType::f32, d, s),
                          mx = Tensor::empty({1}, DType::f32, d, s);
                   Tensor rows = Tensor::empty({29}, DType::f32, d, s),
                          norm = Tensor::empty({1}, DType::f32, d, s);
                   k::sum(in[0], sum, s);
                   k::max(in[0], mx, s);
                   k::sum_rows(in[0], rows, false, s);
                   k::global_l2_norm({in[0], in[1]}, norm, s);
                   return std::vector<Tensor>{sum, mx, rows, norm};
                 }});
  ops.push_back(
      {"adamw", {{1003}, {1003}, {1003}, {1003}}, {}, [](const auto& in, const auto&, Stream s) {
         const Device d = in[0].device();
         Tensor p = Tensor::empty({1003}, DType::f32, d, s),
                m = Tensor::empty({1003}, DType::f32, d, s);
         Tensor v = Tensor::empty({1003}, DType::f32, d, s), sq = like(in[3], s);
         k::cast(in[0], p, s);
         k::cast(in[2], m, s);
         k::mul(in[3], in[3], sq, s);  // second moments are never negative
         k::cast(sq, v, s);
         Tensor copy16 = Tensor::empty({1003}, DType::bf16, d, s);
         optim::AdamSegment run;  // one flat-segment run over the whole buffers
         run.master = static_cast<float*>(p.data());
         run.exp_avg = static_cast<float*>(m.data());
         run.exp_avg_sq = static_cast<float*>(v.data());
         run.grad = in[1].data();
         run.grad_dtype = in[1].dtype();
         run.param_copy = copy16.data();
         run.param_dtype = DType::bf16;
         run.n = 1003;
         run.weight_decay = 0.1f;
         for (int t = 1; t <= 3; ++t)
           optim::adam_step({&run, 1}, optim::AdamParams{}, optim::StepArgs{t}, d, s);
         return std::vector<Tensor>{p, m, v, copy16};
       }});
  return ops;
}

}  // namespace zt::selfcheck
