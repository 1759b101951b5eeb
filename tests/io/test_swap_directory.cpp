// SwapDirectory (src/zerotrain/io/swap_directory.h): its name and README, the one-line errors for a
// missing, non-directory, unwritable or too small nvme_path, removal by the destructor, at exit and
// on SIGTERM/SIGINT/SIGHUP in a child process (never by a forked child of the owner), and the
// warning about directories a killed run left behind.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <vector>

#include "io/child_process.h"
#include "io/io_test_util.h"
#include "zerotrain/core/io_error.h"
#include "zerotrain/io/swap_directory.h"
#include "zerotrain/io/swap_file.h"

namespace zt::io {
namespace {

namespace fs = std::filesystem;
using test::ChildProcess;
using test::report_line;
using test::TempDir;

constexpr int64_t kMiB = 1 << 20;

// The message of the error `f` throws (failing the test when it throws none or another type).
template <typename E, typename F>
std::string message_of(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected an exception";
  return "";
}

// A tmpfs of `bytes` mounted on a fresh directory until scope exit, where the kernel lets this
// process mount (root with CAP_SYS_ADMIN).
class SmallFilesystem {
 public:
  SmallFilesystem(const fs::path& at, int64_t bytes) : at_(at) {
    fs::create_directories(at_);
    mounted_ =
        ::mount("tmpfs", at_.c_str(), "tmpfs", 0, ("size=" + std::to_string(bytes)).c_str()) == 0;
  }
  ~SmallFilesystem() {
    if (mounted_) ::umount2(at_.c_str(), MNT_DETACH);
  }
  bool mounted() const { return mounted_; }

 private:
  fs::path at_;
  bool mounted_ = false;
};

TEST(SwapDirectory, NamedSoItIsNoCheckpointWithAReadme) {
  TempDir nvme;
  const SwapDirectory dir = SwapDirectory::create(nvme.path().string(), kMiB);
  EXPECT_EQ(dir.path().parent_path(), nvme.path());
  const std::string name = dir.path().filename().string();
  EXPECT_EQ(name.rfind("zerotrain-swap-", 0), 0u) << name;
  EXPECT_NE(name.find("-" + std::to_string(::getpid()) + "-"), std::string::npos) << name;
  const std::string readme = test::read_bytes(dir.path() / "README.txt");
  EXPECT_NE(readme.find("NOT a checkpoint"), std::string::npos) << readme;
  EXPECT_NE(readme.find("process " + std::to_string(::getpid())), std::string::npos) << readme;
  EXPECT_EQ(dir.file_path("optimizer.swap"), dir.path() / "optimizer.swap");
  for (const std::string bad : {"", "..", "a/b", "README.txt"})
    EXPECT_THROW(dir.file_path(bad), ValueError) << bad;
}

TEST(SwapDirectory, TwoDirectoriesOfOneProcessDiffer) {
  TempDir nvme;
  const SwapDirectory a = SwapDirectory::create(nvme.path().string(), 0);
  const SwapDirectory b = SwapDirectory::create(nvme.path().string(), 0);
  EXPECT_NE(a.path(), b.path());
}

TEST(SwapDirectory, DestructorRemovesItWithItsFiles) {
  TempDir nvme;
  fs::path where;
  {
    const SwapDirectory dir = SwapDirectory::create(nvme.path().string(), 2 * kMiB);
    where = dir.path();
    SwapFile file(dir, "params.swap", kMiB, config::AioConfig{});
    test::write_bytes(dir.path() / "other", "x");
    ASSERT_TRUE(fs::exists(where / "params.swap"));
  }
  EXPECT_FALSE(fs::exists(where));
  EXPECT_TRUE(test::list_dir(nvme.path()).empty());
}

TEST(SwapDirectory, MovedDirectoryHasOneOwner) {
  TempDir nvme;
  SwapDirectory a = SwapDirectory::create(nvme.path().string(), 0);
  const fs::path where = a.path();
  auto b = std::make_unique<SwapDirectory>(std::move(a));
  {
    SwapDirectory c = std::move(*b);
    b.reset();
    EXPECT_TRUE(fs::exists(where));
  }
  EXPECT_FALSE(fs::exists(where));
}

TEST(SwapDirectory, MissingPathIsOneLine) {
  TempDir nvme;
  const std::string path = (nvme / "no-such-disk").string();
  EXPECT_EQ(message_of<ValueError>([&] { SwapDirectory::create(path, 3 * kMiB); }),
            "[offload] nvme_path " + path + " does not exist (make the directory first); the swap files need 3.0 MiB");
}

TEST(SwapDirectory, FileIsNotADirectory) {
  TempDir nvme;
  test::write_bytes(nvme / "file", "x");
  const std::string path = (nvme / "file").string();
  EXPECT_EQ(message_of<ValueError>([&] { SwapDirectory::create(path, 1536); }),
            "[offload] nvme_path " + path + " is not a directory; the swap files need 1.5 KiB");
}

// Checked in a child that is not root (root writes anywhere): the one line, and nothing created.
TEST(SwapDirectory, UnwritablePathIsOneLine) {
  TempDir nvme;
  const fs::path ro = nvme / "read-only";
  fs::create_directories(ro);
  ASSERT_EQ(::chmod(ro.c_str(), 0555), 0);
  ChildProcess child([&](int report) {
    if (::geteuid() == 0 && (::setgid(65534) != 0 || ::setuid(65534) != 0)) {
      report_line(report, "cannot drop root");
      return;
    }
    try {
      SwapDirectory::create(ro.string(), kMiB);
      report_line(report, "created");
    } catch (const IoError& e) {
      report_line(report, e.what());
    }
  });
  EXPECT_EQ(child.read_line(), "[offload] nvme_path " + ro.string() +
                                   " is not writable: Permission denied; the swap files need 1.0 "
                                   "MiB");
  EXPECT_EQ(child.wait(), 0);
  EXPECT_TRUE(test::list_dir(ro).empty());
}

TEST(SwapDirectory, TooLittleFreeSpaceNamesBoth) {
  TempDir nvme;
  const std::string path = nvme.path().string();
  const std::string msg =
      message_of<ValueError>([&] { SwapDirectory::create(path, int64_t{1} << 60); });
  EXPECT_EQ(msg.rfind("[offload] nvme_path " + path + " has ", 0), 0u) << msg;
  EXPECT_NE(msg.find(" free; the swap files need 1073741824.00 GiB"), std::string::npos) << msg;
  EXPECT_TRUE(test::list_dir(nvme.path()).empty());
}

// A real small disk: the exact line with the bytes free.
TEST(SwapDirectory, SmallFilesystemIsOneLine) {
  TempDir nvme;
  SmallFilesystem small(nvme / "small", kMiB);
  if (!small.mounted()) GTEST_SKIP() << "mounting a tmpfs is not permitted here";
  const std::string path = (nvme / "small").string();
  EXPECT_EQ(message_of<ValueError>([&] { SwapDirectory::create(path, 4 * kMiB); }),
            "[offload] nvme_path " + path + " has 1.0 MiB free; the swap files need 4.0 MiB");
  // Enough room by statvfs, then the file's reservation meets the full disk: one line too.
  const SwapDirectory dir = SwapDirectory::create(path, 0);
  const std::string msg =
      message_of<IoError>([&] { SwapFile(dir, "optimizer.swap", 4 * kMiB, config::AioConfig{}); });
  EXPECT_EQ(msg, "[offload] cannot reserve 4.0 MiB (4194304 bytes) for swap file " +
                     (dir.path() / "optimizer.swap").string() +
                     ": No space left on device (the disk of nvme_path is full)");
  EXPECT_FALSE(fs::exists(dir.path() / "optimizer.swap"));
}

// The child makes a swap directory with a file in it, says where, and waits to be signalled.
void make_swap_and_wait(const std::string& nvme, int report) {
  const SwapDirectory dir = SwapDirectory::create(nvme, 2 * kMiB);
  SwapFile file(dir, "optimizer.swap", kMiB, config::AioConfig{});
  std::vector<char> data(kMiB, 'z');
  file.write(0, data.data(), kMiB).wait();
  report_line(report, dir.path().string());
  for (;;)
    ::pause();
}

class SwapDirectorySignal : public ::testing::TestWithParam<int> {};

TEST_P(SwapDirectorySignal, RemovesTheDirectoryAndEndsTheProcessBySignal) {
  const int signo = GetParam();
  TempDir nvme;
  ChildProcess child([&](int report) {
    struct sigaction current {};
    ::sigaction(signo, nullptr, &current);
    if (current.sa_handler == SIG_IGN) ::signal(signo, SIG_DFL);  // as an interactive run has it
    make_swap_and_wait(nvme.path().string(), report);
  });
  const fs::path where = child.read_line();
  ASSERT_TRUE(fs::exists(where / "optimizer.swap")) << where;
  child.kill(signo);
  const int status = child.wait();
  ASSERT_TRUE(WIFSIGNALED(status)) << status;
  EXPECT_EQ(WTERMSIG(status), signo);
  EXPECT_FALSE(fs::exists(where));
  EXPECT_TRUE(test::list_dir(nvme.path()).empty());
}

INSTANTIATE_TEST_SUITE_P(Signals, SwapDirectorySignal, ::testing::Values(SIGTERM, SIGINT, SIGHUP),
                         [](const auto& p) { return std::string(sigabbrev_np(p.param)); });

TEST(SwapDirectory, ExitWithoutDestructorRemovesIt) {
  TempDir nvme;
  ChildProcess child([&](int report) {
    static auto* leaked = new SwapDirectory(SwapDirectory::create(nvme.path().string(), 0));
    report_line(report, leaked->path().string());
    std::exit(0);
  });
  const fs::path where = child.read_line();
  EXPECT_EQ(child.wait(), 0);
  EXPECT_FALSE(where.empty());
  EXPECT_FALSE(fs::exists(where)) << where;
}

TEST(SwapDirectory, ForkedChildLeavesTheParentsDirectory) {
  TempDir nvme;
  const SwapDirectory dir = SwapDirectory::create(nvme.path().string(), 0);
  ChildProcess exits([](int) { std::exit(0); });
  EXPECT_EQ(exits.wait(), 0);
  EXPECT_TRUE(fs::exists(dir.path() / "README.txt"));
  ChildProcess killed([](int report) {
    report_line(report, "ready");
    for (;;)
      ::pause();
  });
  ASSERT_EQ(killed.read_line(), "ready");
  killed.kill(SIGTERM);
  killed.wait();
  EXPECT_TRUE(fs::exists(dir.path() / "README.txt"));
}

// SIGKILL cannot be caught: the next run warns about the directory left behind and keeps it.
TEST(SwapDirectory, WarnsAboutTheDirectoryOfAKilledRun) {
  TempDir nvme;
  ChildProcess child([&](int report) { make_swap_and_wait(nvme.path().string(), report); });
  const fs::path stale = child.read_line();
  child.kill(SIGKILL);
  child.wait();
  ASSERT_TRUE(fs::exists(stale / "optimizer.swap"));

  ::testing::internal::CaptureStderr();
  { const SwapDirectory dir = SwapDirectory::create(nvme.path().string(), 0); }
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(err, "[offload] warning: " + stale.string() + " holds the swap files of process " +
                     std::to_string(child.pid()) +
                     " of this host, which no longer runs; zerotrain leaves it alone, delete it "
                     "to free the space\n");
  EXPECT_TRUE(fs::exists(stale / "optimizer.swap"));
}

}  // namespace
}  // namespace zt::io
