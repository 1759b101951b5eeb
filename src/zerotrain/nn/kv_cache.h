// The keys and values of every decoder layer for the positions a generation has seen so far, so
// that each new token attends to them without recomputing the prefix. One [B, capacity, Hkv, D]
// buffer per layer for keys and one for values, in the model's compute dtype on its device,
// allocated once for the whole generation (prompt + new tokens). Each layer writes its new
// positions, then the model advances the length once. Tested by tests/nn/test_cached_decoder.cpp.
#pragma once

#include <cstdint>
#include <vector>

#include "zerotrain/core/tensor.h"

namespace zt::nn {

struct KvCacheShape {
  int64_t layers = 0;
  int64_t batch = 0;
  int64_t capacity = 0;  // positions it can hold
  int64_t kv_heads = 0;
  int64_t head_dim = 0;
};

class KvCache {
 public:
  KvCache(const KvCacheShape& shape, DType dtype, Device device, Stream stream = {});

  int64_t length() const { return length_; }  // positions filled (the next one's index)
  int64_t capacity() const { return shape_.capacity; }
  const KvCacheShape& shape() const { return shape_; }
  const Tensor& keys(int64_t layer) const;    // [B, capacity, Hkv, D]
  const Tensor& values(int64_t layer) const;  // [B, capacity, Hkv, D]

  // Copies k, v [B, T, Hkv, D] (contiguous) of `layer` to positions length() .. length() + T - 1.
  void write(int64_t layer, const Tensor& k, const Tensor& v, Stream stream);
  // After every layer wrote its T new positions.
  void advance(int64_t new_positions);
  void clear() { length_ = 0; }

 private:
  void check_layer(int64_t layer) const;

  KvCacheShape shape_;
  std::vector<Tensor> keys_;    // per layer [B, capacity, Hkv, D] compute dtype
  std::vector<Tensor> values_;  // per layer [B, capacity, Hkv, D] compute dtype
  int64_t length_ = 0;
};

}  // namespace zt::nn
