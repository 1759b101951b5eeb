// libFuzzer target: a whole safetensors file. The input is written to a file and opened by
// io::SafetensorsReader (header length, JSON, dtypes, shapes, offsets tiling the data section, all
// against the file's size); what opens must hold what the reader relies on (the entries tile the
// data section, each holds numel x dtype bytes), and every small tensor is read as f32
// (the conversion the model loader runs). Any input must open or throw a zt::Error. See
// docs/fuzzing.md.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>

#include "fuzz_scratch.h"
#include "zerotrain/core/error.h"
#include "zerotrain/io/safetensors.h"

namespace {
std::filesystem::path g_file;
}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  g_file = zt::fuzz::scratch_path("zt-fuzz", ".safetensors");
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  zt::fuzz::write_input(g_file, data, size);
  try {
    const zt::io::SafetensorsReader reader(g_file);
    uint64_t next = 0;
    for (const zt::io::SafetensorsEntry& e : reader.entries()) {
      if (e.begin != next || e.end < e.begin) std::abort();
      if (static_cast<uint64_t>(e.numel()) * zt::io::st_dtype_size(e.dtype) != e.nbytes())
        std::abort();
      next = e.end;
      if (e.numel() <= 4096) reader.read(e.name, zt::DType::f32);
    }
  } catch (const zt::Error&) {
  }
  return 0;
}
