// See checkpoint_reader.h.
#include "zerotrain/checkpoint/checkpoint_reader.h"

#include <algorithm>
#include <cstring>

#include "zerotrain/core/error.h"
#include "zerotrain/core/files.h"
#include "zerotrain/core/io_error.h"
#include "zerotrain/io/tensor_copy.h"

namespace zt::checkpoint {

namespace fs = std::filesystem;

namespace {

constexpr const char* kComponent = "checkpoint";

// The safetensors header of `f`, read and validated without touching its data.
io::SafetensorsHeader read_header(const io::DirectReadFile& f) {
  const auto size = static_cast<uint64_t>(f.size());
  std::vector<std::byte> head(static_cast<size_t>(std::min<uint64_t>(size, 8)));
  f.read_small(0, static_cast<int64_t>(head.size()), head.data());
  if (size >= 8) {
    uint64_t n = 0;
    std::memcpy(&n, head.data(), 8);
    // A length past the file or the limit is refused by the parser from the first 8 bytes.
    if (n <= io::kMaxSafetensorsHeaderBytes && n <= size - 8) {
      head.resize(static_cast<size_t>(8 + n));
      f.read_small(8, static_cast<int64_t>(n), head.data() + 8);
    }
  }
  return io::parse_safetensors_header(head.data(), static_cast<size_t>(size), f.path().string());
}

}  // namespace

CheckpointReader::CheckpointReader(const fs::path& dir, const io::DirectReadOptions& io)
    : dir_(dir), buffered_(io.buffered), reader_(io) {
  if (!fs::exists(dir / kCompleteName))
    throw ValueError(kComponent, str(dir.string(), " is not a complete checkpoint (no ",
                                     kCompleteName, " marker: its save did not finish)"));
  manifest_ = read_manifest(dir);
  files_.resize(manifest_.files.size());
  for (size_t i = 0; i < manifest_.files.size(); ++i) {
    const SavedFile& f = manifest_.files[i];
    const fs::path path = dir / f.name;
    if (const std::string kind = non_regular_kind(path); !kind.empty())
      throw FormatError(kComponent, str(path.string(), " is ", kind, ", not a regular file"));
    std::error_code ec;
    const auto size = fs::file_size(path, ec);
    if (ec)
      throw FormatError(kComponent, str(path.string(), ": missing (the manifest lists it)"));
    if (size != f.bytes)
      throw FormatError(kComponent, str(path.string(), ": ", size, " bytes, the manifest says ",
                                        f.bytes, " (truncated or replaced)"));
    for (size_t position = 0; position < f.tensors.size(); ++position) {
      const SavedTensor& t = f.tensors[position];
      auto [it, fresh] = info_.try_emplace(t.name, TensorInfo{t.full_shape, t.dtype});
      if (!fresh && (it->second.shape != t.full_shape || it->second.dtype != t.dtype))
        throw FormatError(kComponent, str(dir.string(), "/", kManifestName, ": tensor ", t.name,
                                          " is stored with two shapes or dtypes"));
      pieces_[t.name].push_back({i, position, t});
    }
  }
  for (auto& [name, list] : pieces_)
    std::sort(list.begin(), list.end(),
              [](const Located& a, const Located& b) { return a.tensor.begin < b.tensor.begin; });
}

CheckpointReader::OpenFile& CheckpointReader::file(size_t i) {
  OpenFile& f = files_[i];
  if (f.file) return f;
  auto opened = std::make_unique<io::DirectReadFile>(dir_ / manifest_.files[i].name, buffered_,
                                                     kComponent);
  f.header = read_header(*opened);
  f.index.clear();
  for (size_t e = 0; e < f.header.entries.size(); ++e)
    f.index.emplace(f.header.entries[e].name, e);
  f.file = std::move(opened);
  return f;
}

io::ByteRange CheckpointReader::bytes_of(const Located& piece) {
  OpenFile& f = file(piece.file);
  const std::string where = str(f.file->path().string(), ": tensor ", piece.tensor.name);
  const auto it = f.index.find(piece.tensor.name);
  if (it == f.index.end()) throw FormatError(kComponent, str(where, " is missing from the file"));
  const io::SafetensorsEntry& e = f.header.entries[it->second];
  const int64_t n = piece.tensor.end - piece.tensor.begin;
  if (e.numel() != n || e.nbytes() != static_cast<uint64_t>(n) * dtype_size(piece.tensor.dtype))
    throw FormatError(kComponent, str(where, " holds ", e.numel(), " elements (", e.nbytes(),
                                      " bytes), the manifest says ", n, " ",
                                      dtype_name(piece.tensor.dtype)));
  const auto begin = static_cast<int64_t>(f.header.data_start() + e.begin);
  return {begin, begin + static_cast<int64_t>(e.nbytes())};
}

void CheckpointReader::read_ahead(size_t i) {
  OpenFile& f = file(i);
  f.read_ahead_started = true;
  const std::vector<SavedTensor>& listed = manifest_.files[i].tensors;
  std::vector<io::ByteRange> ranges;
  for (size_t position = 0; position < listed.size(); ++position) {
    if (verified_.contains({i, listed[position].name})) break;
    try {
      ranges.push_back(bytes_of({i, position, listed[position]}));
    } catch (const Error&) {
      break;
    }
  }
  reader_.read_ahead(*f.file, std::move(ranges));
}

void CheckpointReader::check_crc(const Located& piece, uint32_t crc) const {
  if (crc == piece.tensor.crc32) return;
  throw FormatError(kComponent, str((dir_ / manifest_.files[piece.file].name).string(),
                                    ": tensor ", piece.tensor.name, " fails its checksum (CRC-32 ",
                                    crc32_hex(crc), ", saved ", crc32_hex(piece.tensor.crc32),
                                    "): the file is corrupt"));
}

void CheckpointReader::read(const zero::ShardRange& range, Tensor& dst, Stream stream) {
  const auto it = pieces_.find(range.name);
  if (it == pieces_.end())
    throw ValueError(kComponent, str("the checkpoint ", dir_.string(), " has no tensor ",
                                     range.name, " (it was saved by another model or optimizer)"));
  const TensorInfo& info = info_.at(range.name);
  if (info.shape != range.full_shape)
    throw ValueError(kComponent, str("the checkpoint ", dir_.string(), " stores ", range.name,
                                     " with shape ", to_string(info.shape), ", this run's is ",
                                     to_string(range.full_shape)));
  if (info.dtype != dst.dtype())
    throw ValueError(kComponent, str("the checkpoint ", dir_.string(), " stores ", range.name,
                                     " as ", dtype_name(info.dtype), ", this run keeps it as ",
                                     dtype_name(dst.dtype())));
  const auto element = static_cast<int64_t>(dtype_size(info.dtype));
  int64_t covered = 0;
  for (const Located& piece : it->second) {
    const int64_t from = std::max(range.begin, piece.tensor.begin);
    const int64_t to = std::min(range.end, piece.tensor.end);
    if (from >= to) continue;
    const io::ByteRange whole = bytes_of(piece);
    const bool verified = verified_.contains({piece.file, piece.tensor.name});
    // An unverified piece is read whole for its checksum; a verified one only where it is needed.
    const int64_t read_from = verified ? from : piece.tensor.begin;
    const int64_t read_to = verified ? to : piece.tensor.end;
    const io::ByteRange bytes{whole.begin + (read_from - piece.tensor.begin) * element,
                              whole.begin + (read_to - piece.tensor.begin) * element};
    const std::string what = str(manifest_.files[piece.file].name, ": tensor ", range.name);
    // Elements [from, to) of the piece go to dst[from - range.begin, to - range.begin).
    const int64_t wanted_begin = (from - read_from) * element;
    const int64_t wanted_end = (to - read_from) * element;
    const auto sink = [&](size_t, int64_t offset, const std::byte* data, int64_t n) {
      const int64_t a = std::max(offset, wanted_begin);
      const int64_t b = std::min(offset + n, wanted_end);
      if (a >= b) return;
      ZT_ASSERT(a % element == 0 && b % element == 0, kComponent, what,
                ": a read piece splits an element at byte ", a, " or ", b);
      const int64_t first = from - range.begin + (a - wanted_begin) / element;
      io::copy_host_elements(data + (a - offset), info.dtype,
                             dst.slice(0, first, first + (b - a) / element), kComponent, what,
                             stream);
    };
    if (!verified && piece.position == 0 && !file(piece.file).read_ahead_started)
      read_ahead(piece.file);
    // Host destinations are filled by the reader threads, device ones (and any read the read-ahead
    // holds) in order by this thread.
    const std::vector<uint32_t> crc =
        reader_.read(*file(piece.file).file, {bytes}, sink,
                     dst.device().is_cpu() ? io::SinkOn::reader_threads : io::SinkOn::caller_in_order);
    if (!verified) {
      check_crc(piece, crc[0]);
      verified_.insert({piece.file, piece.tensor.name});
    }
    covered += to - from;
  }
  if (covered != range.end - range.begin)
    throw ValueError(kComponent, str("the checkpoint ", dir_.string(), " covers ", covered, " of the ",
                                     range.end - range.begin, " elements [", range.begin, ", ",
                                     range.end, ") of ", range.name));
}

std::vector<std::string> CheckpointReader::verify_all() {
  std::vector<std::string> problems;
  // Per file, its pieces in file order: one pass over the file, start to end.
  std::vector<std::vector<std::pair<io::ByteRange, const Located*>>> by_file(files_.size());
  for (const auto& [name, list] : pieces_)
    for (const Located& piece : list) {
      if (verified_.contains({piece.file, piece.tensor.name})) continue;
      try {
        by_file[piece.file].push_back({bytes_of(piece), &piece});
      } catch (const Error& e) {
        problems.push_back(e.what());
      }
    }
  for (size_t i = 0; i < by_file.size(); ++i) {
    auto& list = by_file[i];
    if (list.empty()) continue;
    std::sort(list.begin(), list.end(),
              [](const auto& a, const auto& b) { return a.first.begin < b.first.begin; });
    std::vector<io::ByteRange> ranges;
    for (const auto& [bytes, piece] : list)
      ranges.push_back(bytes);
    std::vector<uint32_t> crcs;
    try {
      crcs = reader_.read(*file(i).file, ranges);
    } catch (const Error& e) {
      problems.push_back(e.what());
      continue;
    }
    for (size_t p = 0; p < list.size(); ++p) {
      try {
        check_crc(*list[p].second, crcs[p]);
        verified_.insert({i, list[p].second->tensor.name});
      } catch (const Error& e) {
        problems.push_back(e.what());
      }
    }
  }
  return problems;
}

}  // namespace zt::checkpoint
