// How long this process has run: from its start as the kernel records it (so the dynamic loader
// and static initializers count too) to now. `zerotrain train` states it as its start-up time.
// Tested by tests/core/test_process_clock.cpp.
#pragma once

namespace zt {

// Seconds since this process started (/proc/self/stat against CLOCK_BOOTTIME, 10 ms resolution);
// where /proc cannot be read, since the first call.
double seconds_since_process_start();

}  // namespace zt
