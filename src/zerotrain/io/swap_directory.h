// The per-run directory that holds the swap files of NVMe offload (ZeRO-Infinity), created under
// the user's nvme_path (ds_config zero_optimization.offload_optimizer/offload_param.nvme_path,
// flag --nvme-path) as zerotrain-swap-<host>-<pid>-<random>/ with a README.txt saying what it is,
// so it can never be mistaken for a checkpoint. It is removed with everything in it by its
// destructor, at std::exit and on SIGTERM/SIGINT/SIGHUP/SIGABRT ([Note: swap cleanup] in
// io/swap_cleanup.h). Tested by tests/io/test_swap_directory.cpp.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

namespace zt::io {

// What keeps `nvme_path` from holding `bytes_needed` bytes of swap files, in words that follow the
// path ("does not exist (make the directory first)", "is not a directory", "is not writable:
// <reason>", "has <bytes> free", ...), or nothing when it can. `system` marks a refusal by the
// system (permissions, a failed stat) rather than by the path's kind or size. The one check behind
// SwapDirectory::create and the run's check before it builds anything (train/nvme_path_check.h).
struct SwapPathProblem {
  std::string what;
  bool system = false;
};
std::optional<SwapPathProblem> swap_path_problem(const std::string& nvme_path,
                                                 int64_t bytes_needed);

class SwapDirectory {
 public:
  // Makes the directory under `nvme_path` after swap_path_problem finds nothing; otherwise one line
  // "[offload] nvme_path <path> <problem>; the swap files need <bytes>", an IoError when the
  // system refused, a ValueError otherwise. Warns
  // (stderr, one line each) about swap directories under `nvme_path` that a dead process of this
  // host left behind, and leaves them there.
  static SwapDirectory create(const std::string& nvme_path, int64_t bytes_needed);

  ~SwapDirectory();  // removes the directory and its files
  SwapDirectory(SwapDirectory&& other) noexcept;
  SwapDirectory& operator=(SwapDirectory&& other) noexcept;
  SwapDirectory(const SwapDirectory&) = delete;
  SwapDirectory& operator=(const SwapDirectory&) = delete;

  const std::filesystem::path& path() const { return path_; }
  // Where a swap file called `name` (a plain file name, no '/') lives; throws ValueError otherwise.
  std::filesystem::path file_path(const std::string& name) const;

  static constexpr const char* kNamePrefix = "zerotrain-swap-";
  static constexpr const char* kReadmeName = "README.txt";

 private:
  SwapDirectory(std::filesystem::path path, int slot, int owner_pid)
      : path_(std::move(path)), slot_(slot), owner_pid_(owner_pid) {}
  void remove() noexcept;

  std::filesystem::path path_;
  int slot_ = -1;      // in the cleanup registry; -1 when moved from
  int owner_pid_ = 0;  // only the creating process removes it (not a forked child)
};

}  // namespace zt::io
