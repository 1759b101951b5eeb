// libFuzzer target: model.safetensors.index.json. The input is written as the index of a
// directory that also holds two valid shards (made once), then opened by io::ShardedReader: the
// weight_map's file names must stay inside the directory, name existing shards holding their
// tensors; any input must open or throw a zt::Error. See docs/fuzzing.md.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "fuzz_scratch.h"
#include "zerotrain/core/error.h"
#include "zerotrain/io/safetensors_header.h"
#include "zerotrain/io/sharded_safetensors.h"

namespace {

namespace fs = std::filesystem;

fs::path g_dir;

// A shard with one F32 tensor of 4 elements.
void write_shard(const fs::path& path, const std::string& tensor) {
  zt::io::SafetensorsEntry e;
  e.name = tensor;
  e.dtype = zt::io::StDType::F32;
  e.shape = {2, 2};
  e.begin = 0;
  e.end = 16;
  std::ofstream out(path, std::ios::binary);
  out << zt::io::safetensors_header_bytes({e}, {{"format", "pt"}}) << std::string(16, '\0');
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  g_dir = zt::fuzz::scratch_path("zt-fuzz-index");
  fs::create_directories(g_dir);
  write_shard(g_dir / "model-00001-of-00002.safetensors", "a.weight");
  write_shard(g_dir / "model-00002-of-00002.safetensors", "b.weight");
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  zt::fuzz::write_input(g_dir / zt::io::kWeightsIndexFile, data, size);
  try {
    const zt::io::ShardedReader reader(g_dir);
    for (const std::string& name : reader.names()) {
      const fs::path file = reader.file_of(name).path();
      if (file.parent_path() != g_dir) std::abort();  // a shard outside the directory
    }
  } catch (const zt::Error&) {
  }
  return 0;
}
