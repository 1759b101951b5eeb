// The safetensors header: an 8-byte little-endian length N, then N bytes of JSON
// {"__metadata__": {str: str}, name: {"dtype", "shape", "data_offsets": [begin, end]}, ...}
// (padded with spaces), then the data section the offsets index. Parsing validates everything
// (lengths, JSON, dtypes, shapes, offsets contiguous from 0 and covering the file exactly) and each
// problem is a FormatError naming the file and the tensor. Tested by
// tests/io/test_safetensors_malformed.cpp and test_safetensors_reference.cpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "zerotrain/core/tensor.h"
#include "zerotrain/io/safetensors_dtype.h"

namespace zt::io {

// The reference implementation refuses headers above 100 MB; so does this one.
constexpr uint64_t kMaxSafetensorsHeaderBytes = 100'000'000;

struct SafetensorsEntry {
  std::string name;
  StDType dtype = StDType::F32;
  Shape shape;
  uint64_t begin = 0;  // byte offsets into the data section
  uint64_t end = 0;

  int64_t numel() const { return numel_of(shape); }
  uint64_t nbytes() const { return end - begin; }
};

struct SafetensorsHeader {
  std::vector<SafetensorsEntry> entries;        // in data order (ascending offsets)
  std::map<std::string, std::string> metadata;  // "__metadata__"
  uint64_t header_bytes = 0;                    // N: the JSON text with its padding
  uint64_t data_bytes = 0;                      // size of the data section

  uint64_t data_start() const { return 8 + header_bytes; }
};

// Parses and validates the header of a file of `file_size` bytes; `file` names it in errors. Reads
// only the first 8 + N bytes of `file_data` (the first 8 alone when N is past the file or the
// limit): the data section is checked against the offsets by its size, so a reader may hand over
// just the header (checkpoint/checkpoint_reader.cpp does).
SafetensorsHeader parse_safetensors_header(const std::byte* file_data, size_t file_size,
                                           const std::string& file);

// The 8-byte length and the JSON text, padded with spaces to a multiple of 8 bytes, for entries in
// the given order, exactly as the reference writer lays it out ("__metadata__" first when present).
std::string safetensors_header_bytes(const std::vector<SafetensorsEntry>& entries,
                                     const std::map<std::string, std::string>& metadata);

}  // namespace zt::io
