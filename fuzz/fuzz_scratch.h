// What the fuzz targets whose reader takes a path share: a scratch path of this process under
// $TMPDIR (or /tmp), removed with everything under it when the fuzzer exits, and the input written
// over a file there before each run. Used by fuzz_safetensors.cpp, fuzz_token_file.cpp and
// fuzz_sharded_index.cpp; see docs/fuzzing.md.
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace zt::fuzz {

// $TMPDIR/<stem>-<pid><suffix> (or under /tmp), removed at exit. Call from LLVMFuzzerInitialize.
inline std::filesystem::path scratch_path(const std::string& stem, const std::string& suffix = "") {
  static std::vector<std::filesystem::path> made;
  if (made.empty())
    std::atexit([] {
      std::error_code ec;
      for (const std::filesystem::path& p : made)
        std::filesystem::remove_all(p, ec);
    });
  const char* tmp = std::getenv("TMPDIR");
  made.push_back(std::filesystem::path(tmp ? tmp : "/tmp") /
                 (stem + "-" + std::to_string(::getpid()) + suffix));
  return made.back();
}

// The fuzzer's input as the whole content of `path`.
inline void write_input(const std::filesystem::path& path, const uint8_t* data, size_t size) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
}

}  // namespace zt::fuzz
