// The process-wide list of live swap directories (io/swap_directory.h) and what removes them when
// the process ends without running their destructors: std::exit (an atexit handler) and
// SIGTERM, SIGINT, SIGHUP or SIGABRT (a signal handler that removes them, puts the signal's
// previous action back and raises the signal again, so the process still ends as it would have).
// See [Note: swap cleanup]. Tested by tests/io/test_swap_directory.cpp.
//
// [Note: swap cleanup] A signal handler may only make async-signal-safe calls, so each live
// directory sits in a fixed slot with its path precomputed and the id of the process that made it;
// the handler lists the directory with getdents64, unlinks its files (swap directories hold only
// flat files) and removes it with rmdir: no allocation, no lock, no stdio. Only the process that
// created a directory removes it, so a forked child that exits never deletes its parent's swap
// files. A signal the process ignored when the first directory was registered stays ignored (a
// run under nohup keeps running and keeps its files). SIGKILL and power loss cannot be caught:
// SwapDirectory::create reports the directories such runs left behind.
#pragma once

#include <string>

namespace zt::io::detail {

// Registers `path` for removal at exit and on the signals above (installing the handlers once);
// returns the slot to pass to unregister_swap_directory. Throws ValueError when every slot is in
// use or the path is too long for a slot.
int register_swap_directory(const std::string& path);
// Forgets the slot (the caller removes the directory itself).
void unregister_swap_directory(int slot) noexcept;
// Removes the plain files in `path`, then `path` itself; async-signal-safe, best effort.
void remove_flat_directory(const char* path) noexcept;

}  // namespace zt::io::detail
