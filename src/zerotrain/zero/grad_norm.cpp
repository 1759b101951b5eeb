// The chunked global gradient norm; see [Note: chunked gradient norm] in grad_norm.h.
#include "zerotrain/zero/grad_norm.h"

#include <cmath>

#include "zerotrain/core/error.h"
#include "zerotrain/kernels/reduce.h"
#include "zerotrain/zero/host_buffer.h"

namespace zt::zero {

void norm_partials(const Tensor& grad, Tensor out, Stream stream) {
  kernels::chunk_sum_squares(grad, kNormChunk, out, stream);
}

std::span<const float> partials_on_host(const Tensor& partials, Tensor& host, Stream stream) {
  const auto n = static_cast<size_t>(partials.numel());
  if (partials.device().is_cpu()) return {partials.data_as<float>(), n};
  if (!host.defined() || host.numel() != partials.numel())
    host = host_buffer(partials.numel(), DType::f32, "the gradient norm's partials");
  // A host stream would make the copy run on the device's default stream and the wait a no-op.
  const Stream s = stream.device.is_cuda() ? stream : Stream::default_for(partials.device());
  host.copy_from(partials, s);
  synchronize(s);
  return {host.data_as<float>(), n};
}

double norm_from_partials(std::span<const float> partials) {
  double sum = 0;
  for (float p : partials)
    sum += static_cast<double>(p);
  return std::sqrt(sum);
}

double norm_from_gathered(std::span<const float> gathered,
                          const std::vector<int64_t>& chunks_per_shard, int world) {
  int64_t per_rank = 0;
  for (int64_t c : chunks_per_shard)
    per_rank += c;
  if (static_cast<int64_t>(gathered.size()) != per_rank * world)
    throw ValueError("grad_norm",
                     str("gathered ", gathered.size(), " partials, expected ", per_rank * world,
                         " (", per_rank, " per rank x ", world, " ranks)"));
  double sum = 0;
  int64_t group_offset = 0;
  for (int64_t c : chunks_per_shard) {
    for (int r = 0; r < world; ++r)
      for (int64_t j = 0; j < c; ++j)
        sum += static_cast<double>(gathered[static_cast<size_t>(r * per_rank + group_offset + j)]);
    group_offset += c;
  }
  return std::sqrt(sum);
}

}  // namespace zt::zero
