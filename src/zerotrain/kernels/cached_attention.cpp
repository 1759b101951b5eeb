// Front-end of the KV-cache attention (see cached_attention.h): argument checks, the default
// scale, then the CPU or CUDA backend. Tested by tests/kernels/test_cached_attention*.cpp.
#include "zerotrain/kernels/cached_attention.h"

#include <cmath>

#include "zerotrain/kernels/check.h"
#include "zerotrain/kernels/cpu/cached_attention.h"
#include "zerotrain/kernels/cuda/cached_attention.h"
#include "zerotrain/kernels/dispatch.h"

namespace zt::kernels {

namespace {

void check_cache(std::string_view op, std::string_view name, const Tensor& cache, const Tensor& q,
                 int64_t past) {
  check_arg(op, name, cache, q, "q");
  check_same_dtype(op, "q", q, name, cache);
  check_dim(op, name, cache, 4);
  if (cache.size(0) != q.size(0) || cache.size(3) != q.size(3))
    throw ShapeError(op, str("q ", q.describe(), " and ", name, " ", cache.describe(),
                             ": batch and head dim must match"));
  if (cache.size(2) == 0 || q.size(2) % cache.size(2) != 0)
    throw ShapeError(op, str("q ", q.describe(), " and ", name, " ", cache.describe(),
                             ": query heads must be a multiple of kv heads"));
  if (cache.size(1) < past + q.size(1))
    throw ShapeError(op,
                     str(name, " ", cache.describe(), " holds ", cache.size(1),
                         " positions, fewer than past ", past, " + ", q.size(1), " new queries"));
}

}  // namespace

void cached_attention_forward(const Tensor& q, const Tensor& k_cache, const Tensor& v_cache,
                              int64_t past, Tensor& out, const AttentionOptions& opt,
                              Stream stream) {
  constexpr std::string_view op = "cached_attention_forward";
  check_defined(op, "q", q);
  check_contiguous(op, "q", q);
  check_dim(op, "q", q, 4);
  check_dtype(op, "q", q, kFloatTypes);
  if (past < 0) throw ValueError(op, str("past must be >= 0, got ", past));
  check_cache(op, "k_cache", k_cache, q, past);
  check_cache(op, "v_cache", v_cache, q, past);
  check_same_shape(op, "k_cache", k_cache, "v_cache", v_cache);
  check_arg(op, "out", out, q, "q");
  check_same_dtype(op, "q", q, "out", out);
  check_same_shape(op, "q", q, "out", out);
  if (opt.window < 0) throw ValueError(op, str("window must be >= 0, got ", opt.window));
  if (!std::isfinite(opt.scale)) throw ValueError(op, str("scale must be finite, got ", opt.scale));
  if (q.device().is_cuda() && q.size(3) > cuda::kCachedAttentionMaxHeadDim)
    throw ValueError(
        op, str("head dim D=", q.size(3), " of q ", q.describe(),
                " is not supported on CUDA (at most ", cuda::kCachedAttentionMaxHeadDim, ")"));
  AttentionOptions o = opt;
  if (o.scale == 0.0f) o.scale = 1.0f / std::sqrt(static_cast<float>(q.size(3)));
  if (q.numel() == 0) return;
  if (q.device().is_cuda())
    ZT_ON_CUDA(op, cuda::cached_attention_forward(q, k_cache, v_cache, past, out, o, stream));
  else
    cpu::cached_attention_forward(q, k_cache, v_cache, past, out, o);
}

}  // namespace zt::kernels
