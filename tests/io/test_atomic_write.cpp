// Crash-safe writes: a write that fails part-way (the file-size limit cuts it off), a missing
// parent directory or a read-only directory leaves no file, or the previous file intact, under the
// final name, and no temporary file behind.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/io_test_util.h"
#include "support/file_size_limit.h"
#include "support/test_util.h"
#include "zerotrain/core/files.h"
#include "zerotrain/core/io_error.h"
#include "zerotrain/io/safetensors.h"

namespace zt::io {
namespace {

using test::expect_error;
using test::list_dir;
using test::TempDir;

using test::FileSizeLimit;

const Tensor& big_tensor() {
  static const Tensor t = test::random_tensor({64, 256}, DType::f32, 3);  // 64 KiB
  return t;
}

TEST(AtomicWrite, FailedWriteLeavesNoFile) {
  TempDir dir;
  const auto path = dir / "model.safetensors";
  {
    FileSizeLimit limit(4096);
    ASSERT_TRUE(limit.ok());
    expect_error<IoError>(
        [&] {
          write_safetensors(path, {{"w", big_tensor()}});
        },
        {"[io]", "cannot write", "model.safetensors"});
  }
  EXPECT_TRUE(list_dir(dir.path()).empty());
}

TEST(AtomicWrite, FailedWriteKeepsThePreviousFile) {
  TempDir dir;
  const auto path = dir / "model.safetensors";
  write_safetensors(path, {{"old", Tensor::from_floats({1, 2, 3}, {3}, DType::f32)}});
  const std::string before = test::read_bytes(path);
  {
    FileSizeLimit limit(4096);
    ASSERT_TRUE(limit.ok());
    EXPECT_THROW(write_safetensors(path, {{"new", big_tensor()}}), IoError);
  }
  EXPECT_EQ(list_dir(dir.path()), (std::vector<std::string>{"model.safetensors"}));
  EXPECT_EQ(test::read_bytes(path), before);
  EXPECT_EQ(SafetensorsReader(path).names(), (std::vector<std::string>{"old"}));
}

TEST(AtomicWrite, MissingParentDirectory) {
  TempDir dir;
  const auto path = dir / "absent" / "model.safetensors";
  expect_error<IoError>(
      [&] {
        write_safetensors(path, {{"w", big_tensor()}});
      },
      {"cannot create", "absent/model.safetensors", "No such file"});
  EXPECT_TRUE(list_dir(dir.path()).empty());
  expect_error<IoError>([&] { write_file_atomic(path, "{}"); }, {"absent/model.safetensors"});
}

TEST(AtomicWrite, ReadOnlyDirectory) {
  if (::geteuid() == 0) GTEST_SKIP() << "root writes into read-only directories";
  TempDir dir;
  ASSERT_EQ(::chmod(dir.path().c_str(), 0555), 0);
  expect_error<IoError>(
      [&] {
        write_safetensors(dir / "m.safetensors", {{"w", big_tensor()}});
      },
      {"cannot create", "Permission denied"});
  ::chmod(dir.path().c_str(), 0755);
  EXPECT_TRUE(list_dir(dir.path()).empty());
}

TEST(AtomicWrite, SuccessLeavesOnlyTheTarget) {
  TempDir dir;
  write_file_atomic(dir / "config.json", "{\"a\": 1}\n");
  write_file_atomic(dir / "config.json", "{\"a\": 2}\n");
  EXPECT_EQ(list_dir(dir.path()), (std::vector<std::string>{"config.json"}));
  EXPECT_EQ(test::read_bytes(dir / "config.json"), "{\"a\": 2}\n");
}

TEST(AtomicWrite, UncommittedFileIsDiscarded) {
  TempDir dir;
  {
    AtomicFile f(dir / "partial.bin");
    f.write("some bytes");
    EXPECT_EQ(f.bytes_written(), 10u);
    EXPECT_EQ(list_dir(dir.path()).size(), 1u);  // the temporary file
  }
  EXPECT_TRUE(list_dir(dir.path()).empty());
}

}  // namespace
}  // namespace zt::io
