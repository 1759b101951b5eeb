// libFuzzer target: a sharded checkpoint's manifest.json (checkpoint/manifest.h: layout,
// precision, the model config text, the train state, every file's tensors with their ranges and
// checksums), parsed as checkpoint::read_manifest parses it. Any input must read or throw a
// zt::Error; what reads has its ranges inside its shapes and survives a write and a re-read
// unchanged. See docs/fuzzing.md.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "zerotrain/checkpoint/manifest.h"
#include "zerotrain/core/error.h"
#include "zerotrain/core/json_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const nlohmann::json j = zt::parse_json(text, "checkpoint", "manifest.json");
    const zt::checkpoint::Manifest m = zt::checkpoint::manifest_from_json(j, "manifest.json");
    for (const zt::checkpoint::SavedFile& f : m.files)
      for (const zt::checkpoint::SavedTensor& t : f.tensors)
        if (t.begin < 0 || t.end < t.begin || t.end > zt::numel_of(t.full_shape)) std::abort();
    const nlohmann::json again = zt::checkpoint::to_json(m);
    if (zt::checkpoint::to_json(zt::checkpoint::manifest_from_json(again, "again")) != again)
      std::abort();
  } catch (const zt::Error&) {
  }
  return 0;
}
