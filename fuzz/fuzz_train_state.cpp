// libFuzzer target: the checkpoint's train_state.json (train/checkpoint.h, read_train_state: the
// step, the data loader's position, the saved run config, the scheduler and loss-scaler states).
// The input is written into a checkpoint directory that holds a COMPLETE marker; any input must
// read or throw a zt::Error. The sharded checkpoint's manifest gets a target beside this one
// (CMakeLists.txt: zt_fuzz_target). See docs/fuzzing.md.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "zerotrain/core/error.h"
#include "zerotrain/train/checkpoint.h"

namespace {
std::filesystem::path g_dir;
}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  const char* tmp = std::getenv("TMPDIR");
  g_dir = std::filesystem::path(tmp ? tmp : "/tmp") /
          ("zt-fuzz-checkpoint-" + std::to_string(::getpid()));
  std::filesystem::create_directories(g_dir);
  std::ofstream(g_dir / zt::train::kCheckpointCompleteName) << "step 1\n";
  std::atexit([] {
    std::error_code ec;
    std::filesystem::remove_all(g_dir, ec);
  });
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  {
    std::ofstream out(g_dir / "train_state.json", std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  try {
    const zt::train::TrainState s = zt::train::read_train_state(g_dir);
    if (s.step < 0) std::abort();
  } catch (const zt::Error&) {
  }
  return 0;
}
