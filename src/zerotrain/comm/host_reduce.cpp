// Rank-ordered host reductions. See [Note: deterministic reductions] in host_reduce.h.
#include "zerotrain/comm/host_reduce.h"

#include <cstdint>
#include <type_traits>

#include "zerotrain/core/error.h"

namespace zt::comm {
namespace {

template <typename T>
float to_f32(T v) {
  if constexpr (std::is_same_v<T, float>)
    return v;
  else
    return static_cast<float>(v);
}

template <typename T>
void reduce_floats(const void* const* c, int w, void* out, size_t count, ReduceOp op) {
  T* o = static_cast<T*>(out);
  const float inv = 1.0f / static_cast<float>(w);
  for (size_t i = 0; i < count; ++i) {
    float acc = to_f32(static_cast<const T*>(c[0])[i]);
    for (int r = 1; r < w; ++r)
      acc += to_f32(static_cast<const T*>(c[r])[i]);
    if (op == ReduceOp::avg) acc *= inv;
    if constexpr (std::is_same_v<T, float>)
      o[i] = acc;
    else
      o[i] = T(acc);
  }
}

// Unsigned arithmetic wraps instead of overflowing (the bit pattern equals the signed sum mod 2^n).
template <typename U>
void reduce_ints(const void* const* c, int w, void* out, size_t count) {
  U* o = static_cast<U*>(out);
  for (size_t i = 0; i < count; ++i) {
    U acc = static_cast<const U*>(c[0])[i];
    for (int r = 1; r < w; ++r)
      acc = static_cast<U>(acc + static_cast<const U*>(c[r])[i]);
    o[i] = acc;
  }
}

template <typename T>
void accumulate_floats(const float* partial, const void* const* c, int n, float* acc,
                       size_t count) {
  for (size_t i = 0; i < count; ++i) {
    int first = 0;
    float a;
    if (partial) {
      a = partial[i];
    } else {
      a = to_f32(static_cast<const T*>(c[0])[i]);
      first = 1;
    }
    for (int r = first; r < n; ++r)
      a += to_f32(static_cast<const T*>(c[r])[i]);
    acc[i] = a;
  }
}

template <typename T>
void finish_floats(const float* acc, int w, void* out, size_t count, ReduceOp op) {
  T* o = static_cast<T*>(out);
  const float inv = 1.0f / static_cast<float>(w);
  for (size_t i = 0; i < count; ++i) {
    float a = acc[i];
    if (op == ReduceOp::avg) a *= inv;
    if constexpr (std::is_same_v<T, float>)
      o[i] = a;
    else
      o[i] = T(a);
  }
}

void check_floating(const char* what, DType dtype) {
  if (!is_floating(dtype))
    throw DTypeError("comm", str(what, ": floating dtypes only, got ", dtype_name(dtype)));
}

}  // namespace

void accumulate_in_rank_order(const float* partial, const void* const* contributions,
                              int num_contributions, float* acc, size_t count, DType dtype) {
  check_floating("accumulate_in_rank_order", dtype);
  ZT_ASSERT(num_contributions >= (partial ? 0 : 1), "comm", "num_contributions ",
            num_contributions);
  switch (dtype) {
    case DType::f32:
      return accumulate_floats<float>(partial, contributions, num_contributions, acc, count);
    case DType::bf16:
      return accumulate_floats<bf16>(partial, contributions, num_contributions, acc, count);
    case DType::f16:
      return accumulate_floats<f16>(partial, contributions, num_contributions, acc, count);
    default:
      return;
  }
}

void finish_in_rank_order(const float* acc, int num_ranks, void* out, size_t count, DType dtype,
                          ReduceOp op) {
  check_floating("finish_in_rank_order", dtype);
  ZT_ASSERT(num_ranks >= 1, "comm", "num_ranks ", num_ranks);
  switch (dtype) {
    case DType::f32:
      return finish_floats<float>(acc, num_ranks, out, count, op);
    case DType::bf16:
      return finish_floats<bf16>(acc, num_ranks, out, count, op);
    case DType::f16:
      return finish_floats<f16>(acc, num_ranks, out, count, op);
    default:
      return;
  }
}

void reduce_in_rank_order(const void* const* contributions, int num_ranks, void* out, size_t count,
                          DType dtype, ReduceOp op) {
  ZT_ASSERT(num_ranks >= 1, "comm", "num_ranks ", num_ranks);
  check_reduce_args("reduce", dtype, op);
  switch (dtype) {
    case DType::f32:
      return reduce_floats<float>(contributions, num_ranks, out, count, op);
    case DType::bf16:
      return reduce_floats<bf16>(contributions, num_ranks, out, count, op);
    case DType::f16:
      return reduce_floats<f16>(contributions, num_ranks, out, count, op);
    case DType::i32:
      return reduce_ints<uint32_t>(contributions, num_ranks, out, count);
    case DType::i64:
      return reduce_ints<uint64_t>(contributions, num_ranks, out, count);
    case DType::u8:
      return reduce_ints<uint8_t>(contributions, num_ranks, out, count);
  }
}

}  // namespace zt::comm
