// OutLock (train/out_lock.h): one job per --out. The lock file names its process and host; a second
// lock on the same directory is one line; a lock of a process that no longer runs is taken over
// with a warning (also a zombie's); another host's lock is refused; the file goes when the lock does; train refuses
// an --out a live job holds before writing anything there.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "io/io_test_util.h"
#include "train/train_test_util.h"
#include "zerotrain/core/io_error.h"
#include "zerotrain/core/process_info.h"
#include "zerotrain/train/out_lock.h"

namespace zt::train {
namespace {

namespace fs = std::filesystem;

std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(OutLock, OneJobPerDirectory) {
  test::TempDir dir;
  const fs::path file = dir / OutLock::kFileName;
  {
    const OutLock lock = OutLock::acquire(dir.path());
    EXPECT_EQ(read_text(file), str(::getpid(), " ", host_name(), "\n"));
    test::expect_error<IoError>([&] { OutLock::acquire(dir.path()); },
                                {str("[train] --out ", dir.path().string(), " is in use by process ",
                                     ::getpid(), " on \"", host_name(), "\""),
                                 "choose another --out"});
  }
  EXPECT_FALSE(fs::exists(file));
}

TEST(OutLock, ALockOfAGoneProcessIsTakenOver) {
  test::TempDir dir;
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ASSERT_GT(child, 0);
  ::waitpid(child, nullptr, 0);  // reaped: that pid runs no more
  ASSERT_FALSE(process_exists(child));
  std::ofstream(dir / OutLock::kFileName) << child << " " << host_name() << "\n";
  testing::internal::CaptureStderr();
  { const OutLock lock = OutLock::acquire(dir.path()); }
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find(str("was locked by process ", child, " of this host, which no longer runs")),
            std::string::npos)
      << err;
}

// A rank killed under mpirun whose parent died too stays a zombie where nothing reaps orphans
// (a container without an init): its pid exists, but it runs no more.
TEST(OutLock, AZombiesLockIsTakenOver) {
  test::TempDir dir;
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ASSERT_GT(child, 0);
  for (int i = 0; i < 1000 && read_text(str("/proc/", child, "/stat")).find(") Z") ==
                                  std::string::npos;
       ++i)
    ::usleep(1000);
  ASSERT_TRUE(process_exists(child));  // not reaped yet
  std::ofstream(dir / OutLock::kFileName) << child << " " << host_name() << "\n";
  testing::internal::CaptureStderr();
  { const OutLock lock = OutLock::acquire(dir.path()); }
  const std::string err = testing::internal::GetCapturedStderr();
  ::waitpid(child, nullptr, 0);
  EXPECT_NE(err.find(str("was locked by process ", child, " of this host, which no longer runs")),
            std::string::npos)
      << err;
}

TEST(OutLock, AnotherHostsLockIsRefused) {
  test::TempDir dir;
  std::ofstream(dir / OutLock::kFileName) << "4242 some-other-host\n";
  test::expect_error<IoError>([&] { OutLock::acquire(dir.path()); },
                              {"is in use by process 4242 on \"some-other-host\""});
  EXPECT_TRUE(fs::exists(dir / OutLock::kFileName));  // never removed by the refused job
}

TEST(OutLock, TrainRefusesAnOutThatALiveJobHolds) {
  test::TempDir dir;
  TrainConfig c = test::tiny_train_config(dir.path(), DType::f32);
  c.steps = 1;
  c.paths.out = dir / "run";
  fs::create_directories(c.paths.out);
  const OutLock held = OutLock::acquire(c.paths.out);
  test::expect_error<IoError>([&] { train(c); }, {"is in use by process"});
  EXPECT_FALSE(fs::exists(c.paths.out / "metrics.jsonl"));
}

}  // namespace
}  // namespace zt::train
