// Helpers for the io tests: a temporary directory removed on scope exit, whole-file bytes, a
// directory listing, random tensors of any dtype, and an expectation that a call throws a given
// error type whose message holds given parts.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "zerotrain/core/tensor.h"

namespace zt::test {

class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

std::string read_bytes(const std::filesystem::path& path);
void write_bytes(const std::filesystem::path& path, const std::string& bytes);
std::vector<std::string> list_dir(const std::filesystem::path& dir);  // sorted file names

// Random values for floating dtypes, random integers in the dtype's range for the others.
Tensor random_any(const Shape& shape, DType dtype, uint64_t seed);

// Runs `f`; expects an exception of type E whose message contains every one of `parts`.
template <typename E, typename F>
void expect_error(F&& f, const std::vector<std::string>& parts) {
  try {
    f();
    ADD_FAILURE() << "expected an exception, none was thrown";
  } catch (const E& e) {
    const std::string msg = e.what();
    for (const std::string& p : parts)
      EXPECT_NE(msg.find(p), std::string::npos)
          << "message \"" << msg << "\" lacks \"" << p << "\"";
  }
}

}  // namespace zt::test
