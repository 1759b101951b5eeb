// Field ceilings and parameter counts without wrapping (see model_size.h). The formulas follow
// the shapes each family's layers create (architecture.h).
#include "zerotrain/nn/model_size.h"

#include <vector>

#include "zerotrain/core/checked_math.h"
#include "zerotrain/core/error.h"
#include "zerotrain/nn/architecture.h"

namespace zt::nn {

namespace {

struct Ceiling {
  const char* field;
  int64_t value;
  int64_t max;
  const char* why;
};

std::vector<Ceiling> ceilings(const ModelConfig& c) {
  constexpr int64_t k2_14 = int64_t(1) << 14;
  return {{"vocab_size", c.vocab_size, 2147483647, "token ids are 32-bit signed"},
          {"hidden_size", c.hidden_size, int64_t(1) << 20, ""},
          {"intermediate_size", c.intermediate_size, int64_t(1) << 22, ""},
          {"num_layers", c.num_layers, k2_14, ""},
          {"num_heads", c.num_heads, k2_14, ""},
          {"num_kv_heads", c.num_kv_heads, k2_14, ""},
          {"head_dim", c.head_dim, k2_14, ""},
          {"max_position_embeddings", c.max_position_embeddings, 2147483647,
           "positions are 32-bit signed"}};
}

// One part of the model: its parameters (nothing when they leave int64), the field that scales
// it, and whether it is a term of the total (one layer's attention and MLP are inside the layers).
struct Part {
  const char* field;
  const char* what;
  std::optional<int64_t> params;
  bool in_total = true;
  bool embedding = false;  // not in the N of 6N
};

std::optional<int64_t> sum(std::initializer_list<std::optional<int64_t>> terms) {
  int64_t s = 0;
  for (const std::optional<int64_t>& t : terms) {
    if (!t) return std::nullopt;
    const std::optional<int64_t> next = checked_add(s, *t);
    if (!next) return std::nullopt;
    s = *next;
  }
  return s;
}

// Embeddings, one layer's attention, one layer's MLP and norms, all layers: the formulas of the
// shapes nn/ builds (gpt2's c_attn holds q, k, v; a tied head adds no table).
std::vector<Part> parts(const ModelConfig& c) {
  const Architecture a = architecture_of(c);
  const int64_t C = c.hidden_size, I = c.intermediate_size;
  const std::optional<int64_t> q = checked_mul(c.num_heads, c.head_dim);
  const std::optional<int64_t> kv = checked_mul(c.num_kv_heads, c.head_dim);
  const int64_t norm = a.layer_norm ? 2 * C : C;
  std::optional<int64_t> attention;
  if (q && kv)
    attention = sum({checked_product({2, C, *q}), checked_product({2, C, *kv}),
                     a.qkv_bias ? sum({*q, checked_mul(2, *kv)}) : 0, a.o_bias ? C : 0});
  const std::optional<int64_t> mlp =
      a.mlp == MlpKind::swiglu ? sum({checked_product({3, C, I}), a.mlp_bias ? 2 * I + C : 0})
                  : sum({checked_product({2, C, I}), a.mlp_bias ? I + C : 0});
  const std::optional<int64_t> layer = sum({attention, mlp, 2 * norm});
  const std::optional<int64_t> layers =
      layer ? checked_mul(c.num_layers, *layer) : std::optional<int64_t>();
  return {{"vocab_size", "the token embedding", checked_mul(c.vocab_size, C), true, true},
          {"max_position_embeddings", "the position embedding",
           a.learned_positions ? checked_mul(c.max_position_embeddings, C) : 0, true, true},
          {"num_heads", "one layer's attention", attention, false},
          {"intermediate_size", "one layer's MLP", mlp, false},
          {"num_layers", "the decoder layers", layers},
          {"vocab_size", "the output projection",
           c.tie_word_embeddings ? 0 : checked_mul(c.vocab_size, C)},
          {"hidden_size", "the final norm", norm}};
}

std::string too_many(const Part& p) {
  return str(p.what, " would hold ", p.params ? str(*p.params) : std::string("more than 2^63"),
             " parameters, above the ", "ceiling of 2^47 (", kMaxModelParams, ")");
}

}  // namespace

std::optional<SizeProblem> find_size_problem(const ModelConfig& c) {
  for (const Ceiling& k : ceilings(c))
    if (k.value > k.max)
      return SizeProblem{k.field, str(k.value, " is above the ceiling ", k.max,
                                      *k.why ? str(" (", k.why, ")") : std::string())};
  // Every part is at most 2^47 once checked, so the total of the few parts cannot overflow.
  const std::vector<Part> ps = parts(c);
  const Part* largest = nullptr;
  int64_t total = 0;
  for (const Part& p : ps) {
    if (!p.params || *p.params > kMaxModelParams) return SizeProblem{p.field, too_many(p)};
    if (!p.in_total) continue;
    total += *p.params;
    if (!largest || *p.params > *largest->params) largest = &p;
  }
  if (total > kMaxModelParams)
    return SizeProblem{largest->field, str("the model would hold ", total, " parameters (",
                                           largest->what, ": ", *largest->params,
                                           "), above the ceiling of 2^47 (", kMaxModelParams, ")")};
  return std::nullopt;
}

ModelSize model_size(const ModelConfig& c) {
  if (const std::optional<SizeProblem> p = find_size_problem(c))
    throw ValueError("model_config", str(p->field, ": ", p->message));
  ModelSize s;
  int64_t largest = -1;
  for (const Part& p : parts(c)) {
    if (!p.in_total) continue;
    s.params += *p.params;
    if (p.embedding) s.embedding_params += *p.params;
    if (*p.params > largest) {
      largest = *p.params;
      s.largest_field = p.field;
    }
  }
  return s;
}

}  // namespace zt::nn
