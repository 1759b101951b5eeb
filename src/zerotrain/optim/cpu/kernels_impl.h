// The CPU optimizer updates, written once over a vector type V (optim/cpu/vec.h) and instantiated
// per instruction set by kernels_<isa>.cpp. Each update is the f32 sequence documented in
// optim/optimizers.h; a block runs V-wide over whole vectors and VScalar over the last few
// elements, and since contraction into FMA is off in these files (-ffp-contract=off) every path
// gives bitwise the scalar path's result. Tested by tests/optim/test_cpu_isa.cpp.
//
// [Note: ISA translation units]
// kernels_avx2.cpp and kernels_avx512.cpp are compiled with -mavx2/-mavx512* (see
// src/zerotrain/CMakeLists.txt) and only called after __builtin_cpu_supports said yes. An inline
// function they share with other files (a header's inline function, a template) could be emitted
// with those instructions and picked by the linker for every caller, so everything in this header
// and vec.h lives in an anonymous namespace, and the files call nothing inline from elsewhere.
#pragma once

#include <cstdint>

#include "zerotrain/optim/cpu/kernel_table.h"
#include "zerotrain/optim/cpu/vec.h"

namespace zt::optim::cpu {
namespace {

struct NoCopy {};

template <class W, class T>
inline void store_copy(T* c, int64_t i, W p) {
  if constexpr (!__is_same(T, NoCopy)) p.store(c + i);
}

// Loops over [lo, hi) of a run whose grad is G and copy C, calling op.apply on W = V, then
// VScalar for the tail. kStates buffers of state are loaded and stored.
template <class V, class G, class C, class Op>
inline void run_loop(const Run& r, int64_t lo, int64_t hi, const Op& op_in) {
  const Op op = op_in;  // a local copy: stores through p, s0, s1 cannot alias its constants
  float* __restrict__ p = r.p;
  float* __restrict__ s0 = r.s0;
  float* __restrict__ s1 = r.s1;
  float* __restrict__ s2 = r.s2;
  const G* __restrict__ g = static_cast<const G*>(r.grad);
  C* __restrict__ c = static_cast<C*>(r.copy);
  auto one = [&]<class W>(int64_t i) {
    W pw = W::load(p + i), a{}, b{}, c3{};
    const W gw = W::load(g + i);
    if constexpr (Op::kStates >= 1) a = W::load(s0 + i);
    if constexpr (Op::kStates >= 2) b = W::load(s1 + i);
    if constexpr (Op::kStates >= 3) {
      c3 = W::load(s2 + i);
      op.template apply<W>(pw, gw, a, b, c3);
    } else {
      op.template apply<W>(pw, gw, a, b);
    }
    pw.store(p + i);
    if constexpr (Op::kStates >= 1) a.store(s0 + i);
    if constexpr (Op::kStates >= 2) b.store(s1 + i);
    if constexpr (Op::kStates >= 3) c3.store(s2 + i);
    store_copy<W>(c, i, pw);
  };
  int64_t i = lo;
  for (; i + V::kWidth <= hi; i += V::kWidth)
    one.template operator()<V>(i);
  for (; i < hi; ++i)
    one.template operator()<VScalar>(i);
}

// Picks the grad and copy types of a run.
template <class V, class Op>
inline void dispatch(const Run& r, int64_t lo, int64_t hi, const Op& op) {
  auto with_copy = [&]<class G>() {
    if (!r.copy)
      run_loop<V, G, NoCopy>(r, lo, hi, op);
    else if (r.copy_dtype == DType::bf16)
      run_loop<V, G, bf16>(r, lo, hi, op);
    else
      run_loop<V, G, f16>(r, lo, hi, op);
  };
  if (r.grad_dtype == DType::f32)
    with_copy.template operator()<float>();
  else if (r.grad_dtype == DType::bf16)
    with_copy.template operator()<bf16>();
  else
    with_copy.template operator()<f16>();
}

struct AdamOp {
  static constexpr int kStates = 2;
  AdamConsts c;
  template <class W>
  void apply(W& p, W g, W& m, W& v) const {
    g = g * W::set1(c.grad_scale);
    g = g + W::set1(c.l2_wd) * p;
    p = p * W::set1(c.decay);
    m = W::set1(c.beta1) * m + W::set1(c.one_minus_beta1) * g;
    v = W::set1(c.beta2) * v + W::set1(c.one_minus_beta2) * (g * g);
    const W denom = sqrt(v) / W::set1(c.bc2_sqrt) + W::set1(c.eps);
    p = p - W::set1(c.step_size) * (m / denom);
  }
};

// Adam with amsgrad: the running max of v (third state) in the denominator.
struct AdamAmsgradOp {
  static constexpr int kStates = 3;
  AdamConsts c;
  template <class W>
  void apply(W& p, W g, W& m, W& v, W& vmax) const {
    g = g * W::set1(c.grad_scale);
    g = g + W::set1(c.l2_wd) * p;
    p = p * W::set1(c.decay);
    m = W::set1(c.beta1) * m + W::set1(c.one_minus_beta1) * g;
    v = W::set1(c.beta2) * v + W::set1(c.one_minus_beta2) * (g * g);
    vmax = max(vmax, v);
    const W denom = sqrt(vmax) / W::set1(c.bc2_sqrt) + W::set1(c.eps);
    p = p - W::set1(c.step_size) * (m / denom);
  }
};

struct LionOp {
  static constexpr int kStates = 1;
  LionConsts c;
  template <class W>
  void apply(W& p, W g, W& m, W&) const {
    g = g * W::set1(c.grad_scale);
    p = p * W::set1(c.decay);
    const W update = W::set1(c.beta1) * m + W::set1(c.one_minus_beta1) * g;
    p = p - W::set1(c.lr) * sign(update);
    m = W::set1(c.beta2) * m + W::set1(c.one_minus_beta2) * g;
  }
};

template <int kMomentum>
struct SgdOp {
  static constexpr int kStates = kMomentum;
  SgdConsts c;
  template <class W>
  void apply(W& p, W g, W& buf, W&) const {
    W d = g * W::set1(c.grad_scale);
    d = d + W::set1(c.wd) * p;
    if constexpr (kMomentum == 1) {
      buf = c.first_step ? d : W::set1(c.momentum) * buf + W::set1(c.one_minus_dampening) * d;
      d = c.nesterov ? d + W::set1(c.momentum) * buf : buf;
    }
    p = p - W::set1(c.lr) * d;
  }
};

// LAMB's u from the updated moments.
template <class W>
inline W lamb_update(const LambConsts& c, W p, W m, W v) {
  const W v_hat = v / W::set1(c.bc2);
  const W denom = c.eps_inside_sqrt ? sqrt(v_hat + W::set1(c.eps)) : sqrt(v_hat) + W::set1(c.eps);
  return (m / W::set1(c.bc1)) / denom + W::set1(c.wd) * p;
}

template <class V>
LambNorms lamb_moments_block(const Run& r, int64_t lo, int64_t hi, const LambConsts& c_in) {
  const LambConsts c = c_in;
  V acc_p = V::set1(0.0f), acc_u = V::set1(0.0f);
  VScalar tail_p = VScalar::set1(0.0f), tail_u = VScalar::set1(0.0f);
  auto block = [&]<class W, class G>(const G* g, int64_t i, W& ap, W& au) {
    const W p = W::load(r.p + i);
    const W gw = W::load(g + i) * W::set1(c.grad_scale);
    const W m = W::set1(c.beta1) * W::load(r.s0 + i) + W::set1(c.one_minus_beta1) * gw;
    const W v = W::set1(c.beta2) * W::load(r.s1 + i) + W::set1(c.one_minus_beta2) * (gw * gw);
    m.store(r.s0 + i);
    v.store(r.s1 + i);
    const W u = lamb_update(c, p, m, v);
    ap = ap + p * p;
    au = au + u * u;
  };
  auto loop = [&]<class G>() {
    const G* g = static_cast<const G*>(r.grad);
    int64_t i = lo;
    for (; i + V::kWidth <= hi; i += V::kWidth)
      block.template operator()<V>(g, i, acc_p, acc_u);
    for (; i < hi; ++i)
      block.template operator()<VScalar>(g, i, tail_p, tail_u);
  };
  if (r.grad_dtype == DType::f32)
    loop.template operator()<float>();
  else if (r.grad_dtype == DType::bf16)
    loop.template operator()<bf16>();
  else
    loop.template operator()<f16>();
  LambNorms out;
  out.param_sq = static_cast<double>(acc_p.sum()) + static_cast<double>(tail_p.v);
  out.update_sq = static_cast<double>(acc_u.sum()) + static_cast<double>(tail_u.v);
  return out;
}

template <class V, class C>
void lamb_apply_loop(const Run& r, int64_t lo, int64_t hi, const LambConsts& c_in) {
  const LambConsts c = c_in;
  C* __restrict__ copy = static_cast<C*>(r.copy);
  auto one = [&]<class W>(int64_t i) {
    W p = W::load(r.p + i);
    const W u = lamb_update(c, p, W::load(r.s0 + i), W::load(r.s1 + i));
    p = p - W::set1(c.lr_coeff) * u;
    p.store(r.p + i);
    store_copy<W>(copy, i, p);
  };
  int64_t i = lo;
  for (; i + V::kWidth <= hi; i += V::kWidth)
    one.template operator()<V>(i);
  for (; i < hi; ++i)
    one.template operator()<VScalar>(i);
}

template <class V>
void lamb_apply_block(const Run& r, int64_t lo, int64_t hi, const LambConsts& c) {
  if (!r.copy)
    lamb_apply_loop<V, NoCopy>(r, lo, hi, c);
  else if (r.copy_dtype == DType::bf16)
    lamb_apply_loop<V, bf16>(r, lo, hi, c);
  else
    lamb_apply_loop<V, f16>(r, lo, hi, c);
}

template <class V>
void adam_block(const Run& r, int64_t lo, int64_t hi, const AdamConsts& c) {
  if (r.s2)
    dispatch<V>(r, lo, hi, AdamAmsgradOp{c});
  else
    dispatch<V>(r, lo, hi, AdamOp{c});
}

template <class V>
void lion_block(const Run& r, int64_t lo, int64_t hi, const LionConsts& c) {
  dispatch<V>(r, lo, hi, LionOp{c});
}

template <class V>
void sgd_block(const Run& r, int64_t lo, int64_t hi, const SgdConsts& c) {
  if (r.s0)
    dispatch<V>(r, lo, hi, SgdOp<1>{c});
  else
    dispatch<V>(r, lo, hi, SgdOp<0>{c});
}

// Adam over bf16 values and moments (see [Note: low-precision optimizer] in
// optim/low_precision.h): each is widened to f32 at the load and rounded once at the store.
template <class V, class G>
inline void adam_lowp_loop(const RunLowp& r, int64_t lo, int64_t hi, const AdamOp& op_in) {
  const AdamOp op = op_in;
  bf16* __restrict__ p = r.p;
  bf16* __restrict__ s0 = r.s0;
  bf16* __restrict__ s1 = r.s1;
  const G* __restrict__ g = static_cast<const G*>(r.grad);
  auto one = [&]<class W>(int64_t i) {
    W pw = W::load(p + i), a = W::load(s0 + i), b = W::load(s1 + i);
    op.template apply<W>(pw, W::load(g + i), a, b);
    pw.store(p + i);
    a.store(s0 + i);
    b.store(s1 + i);
  };
  int64_t i = lo;
  for (; i + V::kWidth <= hi; i += V::kWidth)
    one.template operator()<V>(i);
  for (; i < hi; ++i)
    one.template operator()<VScalar>(i);
}

template <class V>
void adam_lowp_block(const RunLowp& r, int64_t lo, int64_t hi, const AdamConsts& c) {
  if (r.grad_dtype == DType::f32)
    adam_lowp_loop<V, float>(r, lo, hi, AdamOp{c});
  else if (r.grad_dtype == DType::bf16)
    adam_lowp_loop<V, bf16>(r, lo, hi, AdamOp{c});
  else
    adam_lowp_loop<V, f16>(r, lo, hi, AdamOp{c});
}

template <class V>
const KernelTable* make_table() {
  static const KernelTable table{&adam_block<V>,         &lion_block<V>,       &sgd_block<V>,
                                 &lamb_moments_block<V>, &lamb_apply_block<V>, &adam_lowp_block<V>};
  return &table;
}

}  // namespace
}  // namespace zt::optim::cpu
