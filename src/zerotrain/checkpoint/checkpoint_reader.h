// Reading a sharded checkpoint ([Note: sharded checkpoint format] in manifest.h) at any layout:
// any element range of any saved tensor is assembled from whichever files hold it, so a run of
// another world size or ZeRO stage reads only its own shard, and a universal checkpoint reads the
// same way. Every piece is checked against its CRC-32 the first time it is read; a mismatch or a
// file of the wrong size is one line naming the file and tensor. Shard files are read with large
// O_DIRECT requests by io::DirectFileReader, checksummed as they land and copied into the
// destination ([Note: checkpoint reads] in io/direct_file_reader.h): memory is the reader's fixed
// buffers beside the destination tensors, whatever the shard's size. A read of the first piece the
// manifest lists for a file reads the file's pieces ahead in the manifest's order, the order they
// were saved in and a resume of the same layout asks for them (ZeroStage::load_shard); the first
// read that asks for another piece ends it, for good for that file. Tested by
// tests/checkpoint/test_checkpoint_files.cpp, test_checkpoint_direct_read.cpp and
// checkpoint_cli.py.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "zerotrain/checkpoint/manifest.h"
#include "zerotrain/io/direct_file_reader.h"
#include "zerotrain/io/safetensors_header.h"
#include "zerotrain/zero/shard_checkpoint.h"

namespace zt::checkpoint {

class CheckpointReader final : public zero::ShardReader {
 public:
  // `dir`: a complete checkpoint (COMPLETE present). Reads its manifest and checks every file's
  // size; throws ValueError when the checkpoint is not complete, FormatError naming the file.
  // `io`: the reads' request size, requests in flight and whether to bypass O_DIRECT.
  explicit CheckpointReader(const std::filesystem::path& dir, const io::DirectReadOptions& io = {});

  const Manifest& manifest() const { return manifest_; }
  const std::filesystem::path& dir() const { return dir_; }

  int64_t read_step() override { return manifest_.optimizer_step; }
  // Fills `dst` ([end - begin], contiguous, the stored dtype, any device) from the pieces that
  // cover the range. Throws ValueError naming the tensor when it is absent, of another shape or
  // dtype, or not covered; FormatError naming the file when a checksum fails.
  void read(const zero::ShardRange& range, Tensor& dst, Stream stream) override;

  // The full tensors, sorted by name, with their shape and stored dtype.
  struct TensorInfo {
    Shape shape;
    DType dtype = DType::f32;
  };
  const std::map<std::string, TensorInfo>& tensors() const { return info_; }
  // Checks every piece's checksum, reading each file once from start to end; returns one line per
  // bad piece or file (empty: all good).
  std::vector<std::string> verify_all();
  // Bytes read from the disk so far.
  uint64_t bytes_read() const { return reader_.bytes_read(); }
  // Pieces whose bytes were taken from a read-ahead.
  uint64_t pieces_read_ahead() const { return reader_.ranges_read_ahead(); }

 private:
  struct Located {
    size_t file;
    size_t position;  // in the manifest's list of the file's tensors
    SavedTensor tensor;
  };
  // A shard file opened for reading, with its parsed header.
  struct OpenFile {
    std::unique_ptr<io::DirectReadFile> file;
    io::SafetensorsHeader header;
    std::unordered_map<std::string, size_t> index;  // name -> position in header.entries
    bool read_ahead_started = false;
  };
  OpenFile& file(size_t i);
  // The file bytes of `piece` (all of them); throws FormatError naming the file and tensor when the
  // file lacks it or holds another size.
  io::ByteRange bytes_of(const Located& piece);
  // Reads ahead file `i`'s pieces in the manifest's order, up to the first one already verified
  // or whose bytes the file lacks (its read then fails as without read-ahead).
  void read_ahead(size_t i);
  // FormatError naming the file and tensor for a checksum `crc` that is not the saved one.
  void check_crc(const Located& piece, uint32_t crc) const;

  std::filesystem::path dir_;
  Manifest manifest_;
  std::map<std::string, std::vector<Located>> pieces_;  // by tensor name, in begin order
  std::map<std::string, TensorInfo> info_;
  bool buffered_ = false;
  std::vector<OpenFile> files_;  // opened on first use
  io::DirectFileReader reader_;
  std::set<std::pair<size_t, std::string>> verified_;
};

}  // namespace zt::checkpoint
