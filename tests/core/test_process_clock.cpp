// core/process_clock.h: the time since this process started is positive, below the test's own run
// time bound, and grows with the wall clock.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "zerotrain/core/process_clock.h"

namespace zt {
namespace {

TEST(ProcessClock, CountsFromTheProcessStart) {
  const double a = seconds_since_process_start();
  EXPECT_GT(a, 0.0);
  EXPECT_LT(a, 3600.0);  // this test binary has not run for an hour before reaching here
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const double b = seconds_since_process_start();
  EXPECT_GE(b - a, 0.04);
  EXPECT_LT(b - a, 30.0);
}

}  // namespace
}  // namespace zt
