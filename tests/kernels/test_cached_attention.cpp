// The CPU KV-cache attention against the training attention's forward: a prefill (past 0) gives
// attention_forward's output bitwise, and the queries of later positions, in one chunk or one at
// a time against a cache holding the earlier keys, give the rows of the full forward (grouped-
// query heads, sliding windows, f32 and bf16, a cache longer than what is filled); argument
// errors name the tensor.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "support/test_util.h"
#include "zerotrain/core/error.h"
#include "zerotrain/kernels/attention.h"
#include "zerotrain/kernels/cached_attention.h"

namespace zt {
namespace {

using kernels::AttentionOptions;

struct Case {
  int64_t b, s, hq, hkv, d, window;
};

constexpr Case kCases[] = {
    {2, 9, 4, 2, 8, 0}, {1, 13, 6, 3, 16, 4}, {2, 7, 2, 2, 12, 1}, {1, 5, 8, 1, 32, 0}};

// A [B, L, H, D] cache with the first S positions of `kv` and garbage after them.
Tensor cache_from(const Tensor& kv, int64_t capacity) {
  const int64_t b = kv.size(0), s = kv.size(1);
  Tensor cache =
      test::random_tensor({b, capacity, kv.size(2), kv.size(3)}, kv.dtype(), 99, 50.0f, 60.0f);
  for (int64_t i = 0; i < b; ++i)
    cache.select(0, i).slice(0, 0, s).copy_from(kv.select(0, i));
  return cache;
}

// Rows [from, to) of a [B, S, H, D] tensor as a contiguous tensor.
Tensor rows(const Tensor& t, int64_t from, int64_t to) {
  return t.slice(1, from, to).contiguous();
}

TEST(CachedAttention, PrefillIsTheTrainingForwardBitwise) {
  for (DType dt : {DType::f32, DType::bf16})
    for (const Case& c : kCases) {
      const std::string what = str(dtype_name(dt), " S=", c.s, " window=", c.window);
      const Tensor q = test::random_tensor({c.b, c.s, c.hq, c.d}, dt, 1);
      const Tensor k = test::random_tensor({c.b, c.s, c.hkv, c.d}, dt, 2);
      const Tensor v = test::random_tensor({c.b, c.s, c.hkv, c.d}, dt, 3);
      AttentionOptions opt;
      opt.window = c.window;
      Tensor full = Tensor::empty(q.shape(), dt);
      Tensor lse = Tensor::empty({c.b, c.hq, c.s}, DType::f32);
      kernels::attention_forward(q, k, v, full, lse, opt);
      Tensor out = Tensor::empty(q.shape(), dt);
      kernels::cached_attention_forward(q, cache_from(k, c.s + 5), cache_from(v, c.s + 5), 0, out,
                                        opt);
      test::expect_bitwise_equal(full, out, what);
    }
}

TEST(CachedAttention, LaterQueriesMatchTheFullForwardRows) {
  for (DType dt : {DType::f32, DType::bf16})
    for (const Case& c : kCases) {
      const Tensor q = test::random_tensor({c.b, c.s, c.hq, c.d}, dt, 4);
      const Tensor k = test::random_tensor({c.b, c.s, c.hkv, c.d}, dt, 5);
      const Tensor v = test::random_tensor({c.b, c.s, c.hkv, c.d}, dt, 6);
      AttentionOptions opt;
      opt.window = c.window;
      Tensor full = Tensor::empty(q.shape(), dt);
      Tensor lse = Tensor::empty({c.b, c.hq, c.s}, DType::f32);
      kernels::attention_forward(q, k, v, full, lse, opt);
      const Tensor kc = cache_from(k, c.s), vc = cache_from(v, c.s);
      // A chunk of the last positions, then each position on its own.
      const int64_t past = c.s / 2;
      Tensor chunk = Tensor::empty({c.b, c.s - past, c.hq, c.d}, dt);
      kernels::cached_attention_forward(rows(q, past, c.s), kc, vc, past, chunk, opt);
      test::expect_bitwise_equal(rows(full, past, c.s), chunk, str("chunk from ", past));
      for (int64_t i = 0; i < c.s; ++i) {
        Tensor one = Tensor::empty({c.b, 1, c.hq, c.d}, dt);
        kernels::cached_attention_forward(rows(q, i, i + 1), kc, vc, i, one, opt);
        test::expect_bitwise_equal(rows(full, i, i + 1), one, str("position ", i));
      }
    }
}

TEST(CachedAttention, RefusesBadArguments) {
  const Tensor q = test::random_tensor({1, 2, 4, 8}, DType::f32, 1);
  const Tensor cache = test::random_tensor({1, 6, 2, 8}, DType::f32, 2);
  Tensor out = Tensor::empty(q.shape(), DType::f32);
  // The cache must hold past + T positions.
  EXPECT_THROW(kernels::cached_attention_forward(q, cache, cache, 5, out), ShapeError);
  EXPECT_THROW(kernels::cached_attention_forward(q, cache, cache, -1, out), ValueError);
  const Tensor bad_heads = test::random_tensor({1, 6, 3, 8}, DType::f32, 3);
  EXPECT_THROW(kernels::cached_attention_forward(q, bad_heads, bad_heads, 0, out), ShapeError);
  const Tensor bf = test::random_tensor({1, 6, 2, 8}, DType::bf16, 4);
  EXPECT_THROW(kernels::cached_attention_forward(q, bf, bf, 0, out), DTypeError);
  Tensor wrong_out = Tensor::empty({1, 3, 4, 8}, DType::f32);
  EXPECT_THROW(kernels::cached_attention_forward(q, cache, cache, 0, wrong_out), ShapeError);
  AttentionOptions opt;
  opt.window = -2;
  EXPECT_THROW(kernels::cached_attention_forward(q, cache, cache, 0, out, opt), ValueError);
  try {
    kernels::cached_attention_forward(q, cache, cache, 5, out);
  } catch (const ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("[cached_attention_forward] k_cache f32[1, 6, 2, 8]"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace zt
