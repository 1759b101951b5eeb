// The swap directory of an offload to NVMe checked before a run (train/nvme_path_check.h): a
// missing path, a file, a file system too small, each one line naming the key, the flag, the path
// and the bytes the swap files need; a run without nvme is not checked.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include "io/io_test_util.h"
#include "train/train_test_util.h"
#include "zerotrain/core/error.h"
#include "zerotrain/train/nvme_path_check.h"

namespace zt::train {
namespace {

namespace fs = std::filesystem;

std::string error_of(const char* section, const fs::path& path, double needed) {
  try {
    check_nvme_path(section, path, needed);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(NvmePathCheck, MissingFileOrTooSmallIsOneLineWithTheBytesNeeded) {
  test::TempDir dir;
  EXPECT_EQ(error_of("offload_optimizer", dir.path(), 1 << 20), "no error");
  EXPECT_EQ(error_of("offload_param", dir.path() / "absent", 1 << 20),
            str("[config] zero_optimization.offload_param.nvme_path (--nvme-path) ",
                (dir.path() / "absent").string(),
                ": does not exist (make the directory first); the swap files need 1.0 MiB"));
  std::ofstream(dir.path() / "file") << "x";
  EXPECT_NE(
      error_of("offload_optimizer", dir.path() / "file", 1 << 20).find(": is not a directory"),
      std::string::npos);
  const std::string full = error_of("offload_optimizer", dir.path(), std::ldexp(1.0, 60));
  EXPECT_NE(full.find("[config] zero_optimization.offload_optimizer.nvme_path (--nvme-path) "),
            std::string::npos)
      << full;
  EXPECT_NE(full.find(" free; the swap files need "), std::string::npos) << full;
}

TEST(NvmePathCheck, RunsCheckOnlyTheirNvmePaths) {
  test::TempDir dir;
  TrainConfig c = test::tiny_train_config(dir.path(), DType::f32);
  c.zero.stage = 3;
  EXPECT_NO_THROW(check_nvme_paths(c, 1));  // no nvme: the path is never looked at
  c.zero.offload.optimizer.device = config::OffloadDevice::nvme;
  c.zero.offload.optimizer.nvme_path = (dir.path() / "absent").string();
  try {
    check_nvme_paths(c, 2);
    FAIL() << "an absent nvme_path passed";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("offload_optimizer.nvme_path (--nvme-path)"),
              std::string::npos)
        << e.what();
  }
  c.zero.offload.optimizer.nvme_path = dir.path().string();
  EXPECT_NO_THROW(check_nvme_paths(c, 2));  // a tiny model's swap files fit anywhere
}

}  // namespace
}  // namespace zt::train
