// zero.Init's sources and shard builder; see shard_init.h and [Note: zero.Init].
#include "zerotrain/zero/shard_init.h"

#include <algorithm>

#include "zerotrain/core/error.h"
#include "zerotrain/io/hf_model.h"
#include "zerotrain/nn/init.h"

namespace zt::zero {

namespace {
constexpr std::string_view kComponent = "zero_init";
}  // namespace

SeededInitSource::SeededInitSource(nn::ModelConfig config, uint64_t seed, float std)
    : config_(std::move(config)), seed_(seed), std_(std) {}

void SeededInitSource::fill(const nn::Parameter& p, int64_t begin, int64_t end, Tensor dst,
                            Stream stream) {
  // The fill of Transformer::init_random, for this range only, generated on dst's device.
  if (dst.numel() != end - begin)
    throw ValueError(kComponent, str(p.name, ": [", begin, ", ", end, ") into ", dst.describe()));
  nn::init_fill(config_, p, seed_, std_, begin, dst, stream);
}

std::string SeededInitSource::describe() const {
  return str("seeded init (seed ", seed_, ")");
}

PretrainedSource::PretrainedSource(const nn::ModelConfig& config,
                                   const std::vector<nn::Parameter*>& params,
                                   const std::filesystem::path& dir, std::ostream* warnings)
    : reader_(dir) {
  io::CheckpointSources resolved = io::resolve_checkpoint(config, params, reader_);
  for (const auto& [p, src] : resolved.sources)
    sources_.emplace_back(p, src);
  io::warn_unexpected(dir, resolved.unexpected, warnings);
}

void PretrainedSource::fill(const nn::Parameter& p, int64_t begin, int64_t end, Tensor dst,
                            Stream stream) {
  const auto it =
      std::find_if(sources_.begin(), sources_.end(), [&](const auto& s) { return s.first == &p; });
  if (it == sources_.end())
    throw ValueError(kComponent, str(p.name, ": not a parameter this source was resolved for (",
                                     reader_.dir().string(), ")"));
  reader_.read_elements(it->second, begin, end, dst, stream);
}

std::string PretrainedSource::describe() const {
  return str("safetensors ", reader_.dir().string());
}

namespace {

// Elements [lo, hi) of the group's flat layout ([Note: param group layout]), zero outside its
// parameters, each parameter's part of the range filled from `source`.
Tensor build_range(const ParamGroup& group, int64_t lo, int64_t hi, ShardSource& source,
                   DType dtype, Device device, Stream stream) {
  if (!is_floating(dtype))
    throw DTypeError(kComponent, str("value dtype must be floating, got ", dtype_name(dtype)));
  Tensor out = Tensor::zeros({hi - lo}, dtype, device, stream);
  for (size_t i = 0; i < group.params().size(); ++i) {
    const nn::Parameter& p = *group.params()[i];
    const int64_t offset = group.offsets()[i];
    const int64_t begin = std::max(lo, offset);
    const int64_t end = std::min(hi, offset + numel_of(p.shape));
    if (begin < end)
      source.fill(p, begin - offset, end - offset, out.slice(0, begin - lo, end - lo), stream);
  }
  return out;
}

}  // namespace

Tensor build_value_shard(const ParamGroup& group, ShardSource& source, DType dtype, Device device,
                         Stream stream) {
  return build_range(group, group.shard_offset(), group.shard_offset() + group.shard_numel(),
                     source, dtype, device, stream);
}

Tensor build_full_values(const ParamGroup& group, ShardSource& source, DType dtype, Device device,
                         Stream stream) {
  return build_range(group, 0, group.padded_numel(), source, dtype, device, stream);
}

}  // namespace zt::zero
