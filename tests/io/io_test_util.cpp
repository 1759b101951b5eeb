// Helpers of the io tests (see io_test_util.h).
#include "io/io_test_util.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <iterator>

#include "support/test_util.h"

namespace zt::test {

TempDir::TempDir() {
  static std::atomic<int> counter{0};
  path_ = std::filesystem::temp_directory_path() /
          ("zt_io_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
  std::filesystem::remove_all(path_);
  std::filesystem::create_directories(path_);
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::permissions(path_, std::filesystem::perms::owner_all,
                               std::filesystem::perm_options::add, ec);
  std::filesystem::remove_all(path_, ec);
}

std::string read_bytes(const std::filesystem::path& path) {
  std::ifstream f(path, std::ios::binary);
  EXPECT_TRUE(f.good()) << "cannot open " << path;
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

void write_bytes(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(f.good()) << "cannot write " << path;
}

std::vector<std::string> list_dir(const std::filesystem::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

Tensor random_any(const Shape& shape, DType dtype, uint64_t seed) {
  switch (dtype) {
    case DType::i32:
      return random_ints(shape, dtype, seed, -2'000'000'000, 2'000'000'000);
    case DType::i64:
      return random_ints(shape, dtype, seed, -(int64_t{1} << 62), int64_t{1} << 62);
    case DType::u8:
      return random_ints(shape, dtype, seed, 0, 256);
    default:
      return random_tensor(shape, dtype, seed, -4.0f, 4.0f);
  }
}

}  // namespace zt::test
