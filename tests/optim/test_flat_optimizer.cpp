// The flat optimizer's other update rules (optim/flat_optimizer.h: Lamb, Lion, SGD) against their
// step functions (optim/optimizers.h, themselves checked against torch and DeepSpeed's formulas by
// test_optimizers_torch.cpp): one run per parameter steps the same bits as lion_step / sgd_step /
// lamb_step over one seg per parameter, f32 values in place and bf16 values through f32 masters;
// Lamb's norms across runs and across two "ranks" (threads exchanging their norm slots, as
// zero/shard_optimizer.cpp does over the communicator) give the bits of one run
// ([Note: Lamb across shards]); each rule's state slots round-trip through full_state /
// load_state and evict / restore; on a CUDA device (when there is one) the rules match the CPU;
// what the rules cannot do is refused by name.
#include <gtest/gtest.h>

#include <barrier>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "io/io_test_util.h"
#include "optim/param_adam.h"
#include "support/test_util.h"
#include "train/param_fixture.h"
#include "zerotrain/optim/state_slots.h"
#include "zerotrain/zero/optimizer_options.h"

namespace zt {
namespace {

using nn::Parameter;
using nn::ParamKind;
using optim::OptimizerConfig;
using optim::OptimizerKind;

// One of each kind, odd sizes; "big" spans two Lamb norm chunks (5600 > 4096 elements).
std::vector<std::unique_ptr<Parameter>> make_params(DType value_dtype, uint64_t seed,
                                                    bool with_big = false) {
  std::vector<test::ParamSpec> specs = {
      {"embed.weight", {11, 5}, ParamKind::embedding, value_dtype},
      {"layer.0.proj.weight", {7, 13}, ParamKind::weight, value_dtype},
      {"layer.0.proj.bias", {7}, ParamKind::bias, value_dtype},
      {"layer.0.norm.weight", {13}, ParamKind::norm, value_dtype},
      {"head.weight", {3, 13}, ParamKind::weight, value_dtype}};
  if (with_big) specs.insert(specs.begin() + 2, {"layer.0.big.weight", {80, 70}, ParamKind::weight,
                                                 value_dtype});
  return test::make_params(specs, seed);
}

OptimizerConfig lion() {
  OptimizerConfig c;
  c.kind = OptimizerKind::lion;
  c.beta1 = 0.9;
  c.beta2 = 0.99;
  c.weight_decay = 0.1;
  return c;
}

OptimizerConfig sgd(double momentum, double dampening, bool nesterov) {
  OptimizerConfig c;
  c.kind = OptimizerKind::sgd;
  c.momentum = momentum;
  c.dampening = dampening;
  c.nesterov = nesterov;
  c.weight_decay = 0.01;
  return c;
}

OptimizerConfig lamb() {
  OptimizerConfig c;
  c.kind = OptimizerKind::lamb;
  c.beta1 = 0.9;
  c.beta2 = 0.999;
  c.eps = 1e-6;
  c.weight_decay = 0.01;
  c.max_coeff = 0.3;
  c.min_coeff = 0.01;
  c.bias_correction = false;
  return c;
}

std::vector<std::pair<std::string, OptimizerConfig>> every_rule() {
  return {{"lion", lion()},
          {"sgd", sgd(0, 0, false)},
          {"sgd momentum dampening", sgd(0.9, 0.1, false)},
          {"sgd nesterov", sgd(0.9, 0, true)},
          {"lamb", lamb()}};
}

// The reference: the rule's step function over one seg per parameter, on its own buffers.
struct Reference {
  Tensor master;  // [n] f32
  Tensor s0, s1;  // [n] f32 state (exp_avg / momentum_buffer, exp_avg_sq)
  Tensor value;   // [n] the value dtype: round(master) for bf16
};

void reference_step(const OptimizerConfig& c, std::vector<Reference>& refs,
                    const std::vector<Tensor>& grads, const std::vector<float>& wds, float lr,
                    float scale, int64_t step) {
  const optim::StepArgs args{step, scale};
  const auto fill = [&](auto& seg, size_t i) {
    Reference& r = refs[i];
    seg.master = static_cast<float*>(r.master.data());
    seg.grad = grads[i].data();
    seg.grad_dtype = grads[i].dtype();
    seg.param_copy = r.value.dtype() == DType::f32 ? nullptr : r.value.data();
    seg.param_dtype = r.value.dtype();
    seg.n = r.master.numel();
    seg.weight_decay = wds[i];
  };
  if (c.kind == OptimizerKind::lion) {
    std::vector<optim::LionSegment> shards(refs.size());
    for (size_t i = 0; i < refs.size(); ++i) {
      fill(shards[i], i);
      shards[i].exp_avg = static_cast<float*>(refs[i].s0.data());
    }
    optim::lion_step(shards, optim::lion_params(c, lr), args);
  } else if (c.kind == OptimizerKind::sgd) {
    std::vector<optim::SgdSegment> shards(refs.size());
    for (size_t i = 0; i < refs.size(); ++i) {
      fill(shards[i], i);
      shards[i].momentum_buffer =
          c.momentum != 0 ? static_cast<float*>(refs[i].s0.data()) : nullptr;
    }
    optim::sgd_step(shards, optim::sgd_params(c, lr), args);
  } else {
    std::vector<optim::LambSegment> shards(refs.size());
    for (size_t i = 0; i < refs.size(); ++i) {
      fill(shards[i], i);
      shards[i].exp_avg = static_cast<float*>(refs[i].s0.data());
      shards[i].exp_avg_sq = static_cast<float*>(refs[i].s1.data());
    }
    optim::lamb_step(shards, optim::lamb_params(c, lr), args);
  }
}

constexpr float kLrs[] = {1e-2f, 5e-3f, 2e-2f};
constexpr float kScales[] = {1.0f, 0.5f, 2.0f};

// Three steps of the flat optimizer (one run per parameter) and of the reference; returns the
// optimizer's final state.
void check_rule(const OptimizerConfig& c, DType value_dtype, bool with_big) {
  auto params = make_params(value_dtype, 40, with_big);
  test::ParamAdamOptions o;
  o.adam = c;
  test::ParamAdam opt(test::pointers(params), o);
  std::vector<Reference> refs;
  std::vector<float> wds;
  for (const auto& p : params) {
    const int64_t n = p->value.numel();
    Reference r;
    r.value = p->value.flatten().clone();
    r.master = Tensor::empty({n}, DType::f32);
    const std::vector<double> v = test::to_doubles(p->value);
    for (int64_t k = 0; k < n; ++k)
      static_cast<float*>(r.master.data())[k] = static_cast<float>(v[static_cast<size_t>(k)]);
    if (value_dtype == DType::f32) r.master = r.value;  // stepped in place, as the optimizer does
    r.s0 = Tensor::zeros({n}, DType::f32);
    r.s1 = Tensor::zeros({n}, DType::f32);
    refs.push_back(r);
    wds.push_back(zero::decays(*p) ? static_cast<float>(c.weight_decay) : 0.0f);
  }
  for (int s = 0; s < 3; ++s) {
    std::vector<Tensor> grads;
    for (size_t i = 0; i < params.size(); ++i) {
      params[i]->grad = test::random_tensor(params[i]->shape, DType::f32, 900 + 10 * s + i);
      grads.push_back(params[i]->grad.flatten());
    }
    opt.step(kLrs[s], kScales[s]);
    reference_step(c, refs, grads, wds, kLrs[s], kScales[s], s + 1);
  }
  const optim::OptimizerState st = opt.state();
  EXPECT_EQ(st.step, 3);
  for (size_t i = 0; i < params.size(); ++i) {
    const std::string& name = params[i]->name;
    if (with_big) {  // Lamb's norms in other segments: the same up to their summation order
      test::expect_close(test::to_doubles(refs[i].value), params[i]->value.flatten(), {0, 1e-5},
                         name);
      continue;
    }
    test::expect_bitwise_equal(params[i]->value.flatten(), refs[i].value, name);
    if (value_dtype != DType::f32)
      test::expect_bitwise_equal(st.tensors.at(name + ".master").flatten(), refs[i].master,
                                 name + ".master");
    if (c.kind == OptimizerKind::sgd && c.momentum == 0) {
      EXPECT_EQ(st.tensors.count(name + ".momentum_buffer"), 0u);
      continue;
    }
    const char* first = c.kind == OptimizerKind::sgd ? ".momentum_buffer" : ".exp_avg";
    test::expect_bitwise_equal(st.tensors.at(name + first).flatten(), refs[i].s0, name + first);
    if (c.kind == OptimizerKind::lamb)
      test::expect_bitwise_equal(st.tensors.at(name + ".exp_avg_sq").flatten(), refs[i].s1,
                                 name + ".exp_avg_sq");
  }
}

TEST(FlatOptimizerRules, EachRuleMatchesItsStepFunction) {
  for (const auto& [what, c] : every_rule())
    for (DType vd : {DType::f32, DType::bf16}) {
      SCOPED_TRACE(what + " " + std::string(dtype_name(vd)));
      check_rule(c, vd, false);
    }
}

TEST(FlatOptimizerRules, LambOverSeveralNormChunksMatchesLambStep) {
  check_rule(lamb(), DType::f32, true);
}

TEST(FlatOptimizerRules, StateSlotsPerRule) {
  auto suffixes = [](const OptimizerConfig& c, DType value) {
    std::vector<std::string> out;
    for (const optim::StateSlot& s : optim::state_slots(value, optim::Precision::mixed, c))
      out.push_back(s.suffix);
    return out;
  };
  using V = std::vector<std::string>;
  EXPECT_EQ(suffixes(lion(), DType::bf16), (V{".exp_avg", ".master"}));
  EXPECT_EQ(suffixes(sgd(0.9, 0, true), DType::f32), (V{".momentum_buffer"}));
  EXPECT_EQ(suffixes(sgd(0, 0, false), DType::bf16), (V{".master"}));
  OptimizerConfig amsgrad_lamb = lamb();
  amsgrad_lamb.amsgrad = true;  // Adam's alone
  EXPECT_EQ(suffixes(amsgrad_lamb, DType::f32), (V{".exp_avg", ".exp_avg_sq"}));
  EXPECT_STREQ(optim::optimizer_kind_name(OptimizerKind::lamb), "Lamb");
}

// A checkpoint of each rule's state resumes bitwise, in memory and through evict / restore (the
// NVMe swap's path).
TEST(FlatOptimizerRules, StateRoundTripsAndResumesBitwise) {
  for (const auto& [what, c] : every_rule()) {
    SCOPED_TRACE(what);
    test::ParamAdamOptions o;
    o.adam = c;
    auto a = make_params(DType::bf16, 70), b = make_params(DType::bf16, 70);
    test::ParamAdam first(test::pointers(a), o);
    auto grad = [&](std::vector<std::unique_ptr<Parameter>>& ps, int s) {
      for (size_t i = 0; i < ps.size(); ++i)
        ps[i]->grad = test::random_tensor(ps[i]->shape, DType::f32, 300 + 10 * s + i);
    };
    for (int s = 0; s < 2; ++s) {
      grad(a, s);
      first.step(1e-2f);
    }
    // b resumes from a's state (copied), then both take a third step.
    optim::OptimizerState saved;
    saved.step = first.state().step;
    for (const auto& [name, t] : first.state().tensors)
      saved.tensors.emplace(name, t.clone());
    test::ParamAdam second(test::pointers(b), o, saved);
    EXPECT_EQ(second.step_count(), 2);
    const std::vector<Tensor> held = first.adam().evict_state();
    EXPECT_EQ(first.adam().bytes(), 0);
    first.adam().restore_state(held);
    grad(a, 2);
    grad(b, 2);
    first.step(1e-2f);
    second.step(1e-2f);
    for (size_t i = 0; i < a.size(); ++i)
      test::expect_bitwise_equal(a[i]->value, b[i]->value, a[i]->name);
  }
}

// The parameters back to back in one flat buffer (the big one crossing a norm chunk), cut at a
// multiple of kLambNormChunk into two runs held by two optimizers on two threads that sum their
// norm slots, step the same bits as one optimizer over the whole buffer; so does one optimizer
// over the two runs.
TEST(FlatOptimizerRules, LambNormsAcrossRunsAndRanksGiveTheBitsOfOneRun) {
  auto params = make_params(DType::bf16, 80, true);
  const std::vector<Parameter*> ptrs = test::pointers(params);
  test::ParamAdamOptions o;
  o.adam = lamb();
  int64_t total = 0;
  for (Parameter* p : ptrs)
    total += p->value.numel();
  const int64_t cut = optim::kLambNormChunk;  // inside layer.0.big.weight
  auto fill = [&](Tensor& value) {
    int64_t at = 0;
    for (Parameter* p : ptrs) {
      value.slice(0, at, at + p->value.numel()).copy_from(p->value.flatten());
      at += p->value.numel();
    }
  };
  // The pieces of the parameters within [lo, hi) of the flat buffer, at their place in that run.
  auto pieces = [&](int64_t lo, int64_t hi) {
    std::vector<optim::FlatPiece> out;
    int64_t at = 0;
    for (size_t i = 0; i < ptrs.size(); ++i) {
      const int64_t n = ptrs[i]->value.numel(), a = std::max(at, lo), b = std::min(at + n, hi);
      if (a < b) out.push_back({i, a - at, b - at, a - lo});
      at += n;
    }
    return out;
  };
  Tensor whole_value = Tensor::empty({total}, DType::bf16);
  Tensor split_value = Tensor::empty({total}, DType::bf16);
  Tensor two_value = Tensor::empty({total}, DType::bf16);
  fill(whole_value);
  fill(split_value);
  fill(two_value);
  const std::vector<optim::FlatParam> fp = test::flat_params(ptrs, o);
  optim::FlatOptimizer whole(fp, {{whole_value, pieces(0, total)}}, o.adam, o.precision, nullptr);
  optim::FlatOptimizer two_runs(
      fp, {{two_value.slice(0, 0, cut), pieces(0, cut)}, {two_value.slice(0, cut, total),
                                                           pieces(cut, total)}},
      o.adam, o.precision, nullptr);
  optim::FlatOptimizer rank0(fp, {{split_value.slice(0, 0, cut), pieces(0, cut)}}, o.adam,
                             o.precision, nullptr);
  optim::FlatOptimizer rank1(fp, {{split_value.slice(0, cut, total), pieces(cut, total)}},
                             o.adam, o.precision, nullptr);
  // Each "rank" posts its slots, and both add them in rank order.
  std::vector<double> posted[2];
  std::barrier sync(2);
  auto exchange = [&](int rank) {
    return [&, rank](std::span<double> slots, Stream) {
      posted[rank].assign(slots.begin(), slots.end());
      sync.arrive_and_wait();
      for (size_t k = 0; k < slots.size(); ++k)
        slots[k] = posted[0][k] + posted[1][k];
      sync.arrive_and_wait();
    };
  };
  rank0.set_norm_sum(exchange(0));
  rank1.set_norm_sum(exchange(1));
  for (int s = 0; s < 3; ++s) {
    const Tensor grad = test::random_tensor({total}, DType::f32, 500 + s);
    whole.step(std::vector<Tensor>{grad}, kLrs[s], kScales[s]);
    two_runs.step(std::vector<Tensor>{grad.slice(0, 0, cut), grad.slice(0, cut, total)}, kLrs[s],
                  kScales[s]);
    std::thread other([&] {
      rank1.step(std::vector<Tensor>{grad.slice(0, cut, total)}, kLrs[s], kScales[s]);
    });
    rank0.step(std::vector<Tensor>{grad.slice(0, 0, cut)}, kLrs[s], kScales[s]);
    other.join();
  }
  test::expect_bitwise_equal(whole_value, two_value, "two runs");
  test::expect_bitwise_equal(whole_value, split_value, "two ranks");
  // Without the exchange each rank's trust ratio would see half of the big parameter.
  EXPECT_GT(whole.norm_slots(2), 2);
}

// On a CUDA device the rules step the CPU's bits (Lion, SGD) or, Lamb, its values up to the
// norms' summation order (the segments' sums are taken on the device, [Note: CUDA LAMB]).
TEST(FlatOptimizerRules, CudaMatchesTheCpu) {
  ZT_SKIP_WITHOUT_CUDA();
  for (const auto& [what, c] : every_rule()) {
    SCOPED_TRACE(what);
    auto host = make_params(DType::bf16, 95, true), dev = make_params(DType::bf16, 95, true);
    for (auto& p : dev) {
      p->value = p->value.to(Device::cuda(0));
      p->grad = p->grad.to(Device::cuda(0));
    }
    test::ParamAdamOptions o;
    o.adam = c;
    test::ParamAdam on_host(test::pointers(host), o);
    test::ParamAdam on_device(test::pointers(dev), o);
    for (int s = 0; s < 3; ++s) {
      for (size_t i = 0; i < host.size(); ++i) {
        host[i]->grad = test::random_tensor(host[i]->shape, DType::f32, 600 + 10 * s + i);
        dev[i]->grad = host[i]->grad.to(Device::cuda(0));
      }
      on_host.step(kLrs[s], kScales[s]);
      on_device.step(kLrs[s], kScales[s], Stream{Device::cuda(0)});
    }
    synchronize(Stream{Device::cuda(0)});
    for (size_t i = 0; i < host.size(); ++i) {
      const Tensor back = dev[i]->value.to(Device::cpu());
      if (c.kind == OptimizerKind::lamb)
        test::expect_close(test::to_doubles(host[i]->value), back, {1e-2, 1e-2}, host[i]->name);
      else
        test::expect_bitwise_equal(host[i]->value, back, host[i]->name);
    }
  }
}

TEST(FlatOptimizerRules, RefusesWhatARuleCannotDo) {
  auto params = make_params(DType::bf16, 90);
  const std::vector<Parameter*> ptrs = test::pointers(params);
  test::ParamAdamOptions o;
  o.adam = lion();
  o.precision = optim::Precision::low;
  test::expect_error<ValueError>([&] { test::ParamAdam bad(ptrs, o); },
                                 {"Lion", "low precision", "Adam's alone"});
  o.precision = optim::Precision::mixed;
  o.adam = lamb();
  test::ParamAdam lamb_opt(ptrs, o);
  lamb_opt.adam().begin_step(1e-2f, 1.0f);
  std::vector<Tensor> one = {ptrs[0]->grad.flatten()};
  test::expect_error<ValueError>([&] { lamb_opt.adam().step_runs(0, 1, one); },
                                 {"Lamb steps every run at once", "[0, 1)"});
  lamb_opt.adam().cancel_step();
  o.adam = sgd(0, 0, false);
  test::ParamAdam plain_sgd(ptrs, o);
  test::expect_error<ValueError>([&] { plain_sgd.adam().set_betas(0.9, 0.99); },
                                 {"momentum", "SGD"});
  o.adam = sgd(0.9, 0, false);
  test::ParamAdam momentum_sgd(ptrs, o);
  momentum_sgd.adam().set_betas(0.8, 0.99);  // OneCycle's cycled momentum
  EXPECT_DOUBLE_EQ(momentum_sgd.adam().config().momentum, 0.8);
}

}  // namespace
}  // namespace zt
