// KV cache (see kv_cache.h).
#include "zerotrain/nn/kv_cache.h"

#include "zerotrain/core/error.h"

namespace zt::nn {

KvCache::KvCache(const KvCacheShape& shape, DType dtype, Device device, Stream stream)
    : shape_(shape) {
  if (shape.layers < 1 || shape.batch < 1 || shape.capacity < 1 || shape.kv_heads < 1 ||
      shape.head_dim < 1)
    throw ValueError("kv_cache", str("every dimension must be >= 1: layers ", shape.layers,
                                     ", batch ", shape.batch, ", capacity ", shape.capacity,
                                     ", kv heads ", shape.kv_heads, ", head dim ", shape.head_dim));
  const Shape buffer{shape.batch, shape.capacity, shape.kv_heads, shape.head_dim};
  for (int64_t l = 0; l < shape.layers; ++l) {
    keys_.push_back(Tensor::empty(buffer, dtype, device, stream));
    values_.push_back(Tensor::empty(buffer, dtype, device, stream));
  }
}

void KvCache::check_layer(int64_t layer) const {
  if (layer < 0 || layer >= shape_.layers)
    throw ValueError("kv_cache", str("layer ", layer, " outside [0, ", shape_.layers, ")"));
}

const Tensor& KvCache::keys(int64_t layer) const {
  check_layer(layer);
  return keys_[static_cast<size_t>(layer)];
}

const Tensor& KvCache::values(int64_t layer) const {
  check_layer(layer);
  return values_[static_cast<size_t>(layer)];
}

void KvCache::write(int64_t layer, const Tensor& k, const Tensor& v, Stream stream) {
  check_layer(layer);
  const Tensor& cache = keys_[static_cast<size_t>(layer)];
  const Shape expected{shape_.batch, k.dim() == 4 ? k.size(1) : -1, shape_.kv_heads,
                       shape_.head_dim};
  if (k.shape() != expected || v.shape() != expected || k.dtype() != cache.dtype() ||
      v.dtype() != cache.dtype())
    throw ShapeError("kv_cache", str("layer ", layer, ": new keys ", k.describe(), " and values ",
                                     v.describe(), " do not fit the cache ", cache.describe()));
  const int64_t t = k.size(1);
  if (length_ + t > shape_.capacity)
    throw ValueError("kv_cache", str("layer ", layer, ": ", t, " new positions after ", length_,
                                     " exceed the capacity of ", shape_.capacity));
  // Per batch row, the destination positions are one contiguous run.
  for (int64_t b = 0; b < shape_.batch; ++b) {
    Tensor kd = keys_[static_cast<size_t>(layer)].select(0, b).slice(0, length_, length_ + t);
    Tensor vd = values_[static_cast<size_t>(layer)].select(0, b).slice(0, length_, length_ + t);
    kd.copy_from(k.select(0, b), stream);
    vd.copy_from(v.select(0, b), stream);
  }
}

void KvCache::advance(int64_t new_positions) {
  if (new_positions < 0 || length_ + new_positions > shape_.capacity)
    throw ValueError("kv_cache", str("advance by ", new_positions, " after ", length_,
                                     " positions: outside the capacity of ", shape_.capacity));
  length_ += new_positions;
}

}  // namespace zt::nn
