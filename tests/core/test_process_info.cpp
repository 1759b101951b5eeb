// host_name and process_exists (core/process_info.h): a name is always there; this process exists,
// a reaped child and non-positive pids do not.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include "zerotrain/core/process_info.h"

namespace zt {
namespace {

TEST(ProcessInfo, HostNameAndProcesses) {
  EXPECT_FALSE(host_name().empty());
  EXPECT_TRUE(process_exists(::getpid()));
  EXPECT_FALSE(process_exists(0));
  EXPECT_FALSE(process_exists(-1));
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ASSERT_GT(child, 0);
  ::waitpid(child, nullptr, 0);
  EXPECT_FALSE(process_exists(child));
}

}  // namespace
}  // namespace zt
