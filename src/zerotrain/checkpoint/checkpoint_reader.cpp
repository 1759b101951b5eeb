// See checkpoint_reader.h.
#include "zerotrain/checkpoint/checkpoint_reader.h"

#include <algorithm>

#include "zerotrain/core/error.h"
#include "zerotrain/core/io_error.h"

namespace zt::checkpoint {

namespace fs = std::filesystem;

namespace {
constexpr const char* kComponent = "checkpoint";
}  // namespace

CheckpointReader::CheckpointReader(const fs::path& dir) : dir_(dir) {
  if (!fs::exists(dir / kCompleteName))
    throw ValueError(kComponent, str(dir.string(), " is not a complete checkpoint (no ",
                                     kCompleteName, " marker: its save did not finish)"));
  manifest_ = read_manifest(dir);
  files_.resize(manifest_.files.size());
  for (size_t i = 0; i < manifest_.files.size(); ++i) {
    const SavedFile& f = manifest_.files[i];
    const fs::path path = dir / f.name;
    std::error_code ec;
    const auto size = fs::file_size(path, ec);
    if (ec)
      throw FormatError(kComponent, str(path.string(), ": missing (the manifest lists it)"));
    if (size != f.bytes)
      throw FormatError(kComponent, str(path.string(), ": ", size, " bytes, the manifest says ",
                                        f.bytes, " (truncated or replaced)"));
    for (const SavedTensor& t : f.tensors) {
      auto [it, fresh] = info_.try_emplace(t.name, TensorInfo{t.full_shape, t.dtype});
      if (!fresh && (it->second.shape != t.full_shape || it->second.dtype != t.dtype))
        throw FormatError(kComponent, str(dir.string(), "/", kManifestName, ": tensor ", t.name,
                                          " is stored with two shapes or dtypes"));
      pieces_[t.name].push_back({i, t});
    }
  }
  for (auto& [name, list] : pieces_)
    std::sort(list.begin(), list.end(),
              [](const Located& a, const Located& b) { return a.tensor.begin < b.tensor.begin; });
}

const io::SafetensorsReader& CheckpointReader::file(size_t i) {
  if (!files_[i]) files_[i].emplace(dir_ / manifest_.files[i].name);
  return *files_[i];
}

void CheckpointReader::verify(const Located& piece) {
  if (verified_.contains({piece.file, piece.tensor.name})) return;
  const io::SafetensorsReader& f = file(piece.file);
  const std::string where = str(f.path().string(), ": tensor ", piece.tensor.name);
  if (!f.contains(piece.tensor.name))
    throw FormatError(kComponent, str(where, " is missing from the file"));
  const io::SafetensorsEntry& e = f.entry(piece.tensor.name);
  const int64_t n = piece.tensor.end - piece.tensor.begin;
  if (e.numel() != n || e.nbytes() != static_cast<uint64_t>(n) * dtype_size(piece.tensor.dtype))
    throw FormatError(kComponent, str(where, " holds ", e.numel(), " elements (", e.nbytes(),
                                      " bytes), the manifest says ", n, " ",
                                      dtype_name(piece.tensor.dtype)));
  const uint32_t crc = crc32_of(f.data(e), e.nbytes());
  if (crc != piece.tensor.crc32)
    throw FormatError(kComponent, str(where, " fails its checksum (CRC-32 ", crc32_hex(crc),
                                      ", saved ", crc32_hex(piece.tensor.crc32),
                                      "): the file is corrupt"));
  verified_.insert({piece.file, piece.tensor.name});
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
  int64_t covered = 0;
  for (const Located& piece : it->second) {
    const int64_t from = std::max(range.begin, piece.tensor.begin);
    const int64_t to = std::min(range.end, piece.tensor.end);
    if (from >= to) continue;
    verify(piece);
    file(piece.file).read_elements(range.name, from - piece.tensor.begin,
                                   to - piece.tensor.begin,
                                   dst.slice(0, from - range.begin, to - range.begin), stream);
    covered += to - from;
  }
  if (covered != range.end - range.begin)
    throw ValueError(kComponent, str("the checkpoint ", dir_.string(), " covers ", covered, " of the ",
                                     range.end - range.begin, " elements [", range.begin, ", ",
                                     range.end, ") of ", range.name));
}

std::vector<std::string> CheckpointReader::verify_all() {
  std::vector<std::string> problems;
  for (const auto& [name, list] : pieces_)
    for (const Located& piece : list) {
      try {
        verify(piece);
      } catch (const Error& e) {
        problems.push_back(e.what());
      }
    }
  return problems;
}

}  // namespace zt::checkpoint
