// libFuzzer target: a whole safetensors file. The input is written to a file and opened by
// io::SafetensorsReader (header length, JSON, dtypes, shapes, offsets tiling the data section, all
// against the file's size); what opens must hold what the reader relies on (the entries tile the
// data section, each holds numel x dtype bytes), and every small tensor is read as f32
// (the conversion the model loader runs). Any input must open or throw a zt::Error. See
// docs/fuzzing.md.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "zerotrain/core/error.h"
#include "zerotrain/io/safetensors.h"

namespace {
std::filesystem::path g_file;
}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  const char* tmp = std::getenv("TMPDIR");
  g_file = std::filesystem::path(tmp ? tmp : "/tmp") /
           ("zt-fuzz-" + std::to_string(::getpid()) + ".safetensors");
  std::atexit([] {
    std::error_code ec;
    std::filesystem::remove(g_file, ec);
  });
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  {
    std::ofstream out(g_file, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
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
