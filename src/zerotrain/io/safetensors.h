// Safetensors files: a reader over a memory-mapped file (validated on open; reads whole tensors,
// row ranges or flat element ranges into tensors of any floating dtype on any device) and a
// crash-safe writer whose bytes match the reference `safetensors` package. Tested by
// tests/io/test_safetensors_roundtrip.cpp, test_safetensors_reference.cpp (byte-exact against
// files the reference wrote), test_safetensors_malformed.cpp and test_atomic_write.cpp.
#pragma once

#include <filesystem>
#include <functional>
#include <utility>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "zerotrain/core/files.h"
#include "zerotrain/core/stream.h"
#include "zerotrain/core/tensor.h"
#include "zerotrain/io/safetensors_header.h"

namespace zt::io {

class SafetensorsReader {
 public:
  // Maps and validates the file; every problem is a FormatError naming the file (and the tensor).
  explicit SafetensorsReader(const std::filesystem::path& path);

  const std::filesystem::path& path() const { return file_.path(); }
  const std::vector<SafetensorsEntry>& entries() const { return header_.entries; }  // data order
  std::vector<std::string> names() const;                                           // sorted
  bool contains(const std::string& name) const { return index_.count(name) != 0; }
  const SafetensorsEntry& entry(const std::string& name) const;  // ValueError when absent
  const std::map<std::string, std::string>& metadata() const { return header_.metadata; }
  // The tensor's bytes in the mapping (valid while the reader lives).
  const std::byte* data(const SafetensorsEntry& e) const;

  // The whole tensor into `dst` (same shape; contiguous; any device). Floating dtypes convert
  // into one another (F32/F16/BF16); integer tensors need a dst of their own dtype; a tensor of a
  // dtype zerotrain cannot hold (F64, I8, BOOL, ...) is a DTypeError naming it.
  void read(const std::string& name, const Tensor& dst, Stream stream = {}) const;
  // A new tensor of `dtype` on `device`.
  Tensor read(const std::string& name, DType dtype, Device device = Device::cpu(),
              Stream stream = {}) const;
  // Rows [r0, r1) of the first dimension into dst of shape [r1 - r0, rest...].
  void read_rows(const std::string& name, int64_t r0, int64_t r1, const Tensor& dst,
                 Stream stream = {}) const;
  // Elements [begin, end) of the row-major flattened tensor into dst (any shape of end - begin
  // elements): the unit a ZeRO rank reads of its flat shard.
  void read_elements(const std::string& name, int64_t begin, int64_t end, const Tensor& dst,
                     Stream stream = {}) const;
  // Tensor-data bytes read out of the mapping so far (by the reads above): a rank that reads only
  // its slices (ZeRO stage 3's zero.Init) touches only these bytes of the file.
  uint64_t bytes_read() const { return bytes_read_; }

 private:
  MappedFile file_;
  mutable uint64_t bytes_read_ = 0;
  SafetensorsHeader header_;
  std::unordered_map<std::string, size_t> index_;  // name -> position in header_.entries
};

struct NamedTensor {
  NamedTensor() = default;
  NamedTensor(std::string n, Tensor t) : name(std::move(n)), tensor(std::move(t)) {}
  // A tensor made when it is written, of this shape and dtype: a writer then holds one such tensor
  // at a time (a consolidated checkpoint stays bounded by its largest tensor).
  static NamedTensor lazy(std::string n, Shape s, DType d, std::function<Tensor()> make) {
    NamedTensor t;
    t.name = std::move(n);
    t.shape = std::move(s);
    t.dtype = d;
    t.load = std::move(make);
    return t;
  }

  std::string name;
  Tensor tensor;  // any device, any dtype, any strides; undefined for a lazy one
  Shape shape;    // a lazy one's
  DType dtype = DType::f32;
  std::function<Tensor()> load;

  const Shape& shape_of() const { return tensor.defined() ? tensor.shape() : shape; }
  DType dtype_of() const { return tensor.defined() ? tensor.dtype() : dtype; }
  bool defined() const { return tensor.defined() || static_cast<bool>(load); }
};

struct SafetensorsWriteOptions {
  std::map<std::string, std::string> metadata;  // "__metadata__" (omitted when empty)
  std::optional<DType> float_dtype;  // store floating tensors as this dtype (default: their own)
  Stream stream;                     // for copies and casts of device tensors
};

// Writes `tensors` to `path` atomically (a temporary file renamed into place after fsync: a failed
// write leaves no file, or the previous file, under `path`). Layout as the reference writer: data
// ordered by descending dtype alignment then name, header padded to 8 bytes, metadata keys sorted.
// Names must be unique and other than "__metadata__"; tensors must be defined.
void write_safetensors(const std::filesystem::path& path, const std::vector<NamedTensor>& tensors,
                       const SafetensorsWriteOptions& options = {});

// The bytes a tensor occupies once written with `options` (its stored dtype's size * numel).
uint64_t stored_nbytes(const Tensor& t, const SafetensorsWriteOptions& options);
uint64_t stored_nbytes(const NamedTensor& t, const SafetensorsWriteOptions& options);

}  // namespace zt::io
