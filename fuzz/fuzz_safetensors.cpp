// libFuzzer target: a whole safetensors file image through the header parser (length, JSON,
// dtypes, shapes, offsets tiling the data section). Any input must parse or throw a zt::Error,
// and what parses must hold what the reader relies on: the entries tile the data section exactly
// and each holds numel x dtype bytes. See docs/fuzzing.md.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "zerotrain/core/error.h"
#include "zerotrain/io/safetensors_header.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const zt::io::SafetensorsHeader h = zt::io::parse_safetensors_header(
        reinterpret_cast<const std::byte*>(data), size, "fuzz.safetensors");
    uint64_t next = 0;
    for (const zt::io::SafetensorsEntry& e : h.entries) {
      if (e.begin != next || e.end < e.begin) std::abort();
      if (static_cast<uint64_t>(e.numel()) * zt::io::st_dtype_size(e.dtype) != e.nbytes())
        std::abort();
      next = e.end;
    }
    if (next != h.data_bytes || h.data_start() + h.data_bytes != size) std::abort();
  } catch (const zt::Error&) {
  }
  return 0;
}
