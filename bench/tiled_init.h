// A fast stand-in for the seeded init of a benchmark model (train_bench --init tiled): weights and
// embeddings repeat one table of 2^20 normal values (std 0.02) placed on the device once, norms
// are 1 and biases 0, so a multi-billion-parameter model is ready in seconds instead of the
// minutes the host-side seeded init takes. Timing does not depend on the values; losses do, so
// runs that compare losses keep --init seeded. Serves both the full build (init_full) and stage 3's
// zero.Init (a zero::ShardSource). Used by bench/train_bench.cpp.
#pragma once

#include <algorithm>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "zerotrain/nn/parameter.h"
#include "zerotrain/zero/shard_init.h"

namespace zt::bench {

class TiledInit final : public zero::ShardSource {
 public:
  TiledInit() {
    std::mt19937_64 rng(0);
    std::normal_distribution<float> normal(0.0f, 0.02f);
    table_values_.resize(kTable);
    for (float& x : table_values_)
      x = normal(rng);
  }

  void fill(const nn::Parameter& p, int64_t begin, int64_t end, Tensor dst,
            Stream stream) override {
    if (p.kind == nn::ParamKind::bias || p.kind == nn::ParamKind::norm) {
      dst.fill(p.kind == nn::ParamKind::norm ? 1.0 : 0.0, stream);
      return;
    }
    const Tensor& src = table(dst.dtype(), dst.device());
    Tensor flat = dst.flatten();
    for (int64_t at = 0; at < end - begin; at += kTable) {
      const int64_t n = std::min(kTable, end - begin - at);
      flat.slice(0, at, at + n).copy_from(src.slice(0, 0, n), stream);
    }
  }
  std::string describe() const override { return "tiled init (benchmark)"; }

  // Every parameter's full value (a model built with values).
  void init_full(const std::vector<nn::Parameter*>& params, Stream stream) {
    for (nn::Parameter* p : params)
      fill(*p, 0, p->value.numel(), p->value.flatten(), stream);
  }

 private:
  static constexpr int64_t kTable = int64_t{1} << 20;
  const Tensor& table(DType dtype, Device device) {
    const std::string key = str(static_cast<int>(dtype), "@", to_string(device));
    auto it = tables_.find(key);
    if (it == tables_.end())
      it = tables_.emplace(key, Tensor::from_floats(table_values_, {kTable}, dtype, device)).first;
    return it->second;
  }
  std::vector<float> table_values_;
  std::map<std::string, Tensor> tables_;  // [kTable] per dtype and device
};

}  // namespace zt::bench
