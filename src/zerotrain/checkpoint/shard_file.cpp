// See shard_file.h.
#include "zerotrain/checkpoint/shard_file.h"

#include <cstdio>
#include <filesystem>
#include <future>

#include "zerotrain/checkpoint/fault_injection.h"
#include "zerotrain/core/error.h"
#include "zerotrain/core/files.h"
#include "zerotrain/io/safetensors.h"
#include "zerotrain/zero/host_buffer.h"

namespace zt::checkpoint {

namespace fs = std::filesystem;

namespace {

// The host buffer of one piece: page-locked for a GPU piece, so its copy runs at the link's rate
// (the time a save blocks training for); reused by the following saves.
Tensor host_copy_buffer(int64_t numel, DType dtype, bool from_gpu) {
  if (from_gpu) return zero::host_buffer(numel, dtype, "the checkpoint's host copy");
  return Tensor::empty({numel}, dtype, Device::cpu());
}

}  // namespace

void RankShard::write(const zero::ShardRange& range, const Tensor& data, Stream stream) {
  if (data.numel() != range.end - range.begin)
    throw ValueError("checkpoint", str(range.name, ": ", data.numel(), " elements for the range [",
                                       range.begin, ", ", range.end, ")"));
  for (const Piece& p : pieces_)
    if (p.range.name == range.name)
      throw ValueError("checkpoint", str("a rank's shard holds two pieces of ", range.name));
  Tensor host;
  const auto spare = spare_.find(range.name);
  if (spare != spare_.end() && spare->second.numel() == data.numel() &&
      spare->second.dtype() == data.dtype()) {
    host = std::move(spare->second);
    spare_.erase(spare);
    host.copy_from(data, stream);
  } else {
    host = host_copy_buffer(data.numel(), data.dtype(), data.device().is_cuda());
    host.copy_from(data, stream);
  }
  synchronize(stream);
  pieces_.push_back({range, std::move(host)});
}

RankShard RankShard::with_buffers(const std::vector<PieceSpec>& specs) {
  RankShard shard;
  for (const PieceSpec& s : specs)
    shard.pieces_.push_back(
        {{s.name, {s.numel}, 0, s.numel}, host_copy_buffer(s.numel, s.dtype, s.on_gpu)});
  return shard;
}

void RankShard::reuse_buffers(RankShard&& earlier) {
  for (Piece& p : earlier.pieces_)
    spare_[p.range.name] = std::move(p.host);
  earlier.pieces_.clear();
}

uint64_t RankShard::bytes() const {
  uint64_t b = 0;
  for (const Piece& p : pieces_)
    b += p.host.nbytes();
  return b;
}

std::string rank_file_name(int rank, int world) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "rank-%05d-of-%05d.safetensors", rank, world);
  return buf;
}

std::string rank_marker_name(int rank) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "rank-%05d.json", rank);
  return buf;
}

std::string rank_failure_name(int rank) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "rank-%05d.failed", rank);
  return buf;
}

SavedFile write_rank_file(const fs::path& dir, int rank, int world, const RankShard& shard) {
  SavedFile entry;
  entry.name = rank_file_name(rank, world);
  entry.rank = rank;
  std::vector<io::NamedTensor> tensors;
  for (const RankShard::Piece& p : shard.pieces()) {
    tensors.push_back({p.range.name, p.host});
    entry.tensors.push_back(
        {p.range.name, p.range.full_shape, p.range.begin, p.range.end, p.host.dtype(), 0});
  }
  // The checksums while the file is written: the write waits for the disk, they for the cores.
  std::future<void> checksums = std::async(std::launch::async, [&] {
    for (size_t i = 0; i < entry.tensors.size(); ++i)
      entry.tensors[i].crc32 = crc32_of(shard.pieces()[i].host.data(), shard.pieces()[i].host.nbytes());
  });
  try {
    fault_point("write rank file");
    io::write_safetensors(dir / entry.name, tensors);
  } catch (...) {
    checksums.wait();
    throw;
  }
  checksums.get();
  entry.bytes = static_cast<uint64_t>(fs::file_size(dir / entry.name));
  fault_point("write rank marker");
  write_file_atomic(dir / rank_marker_name(rank), to_json(entry).dump() + "\n");
  return entry;
}

}  // namespace zt::checkpoint
