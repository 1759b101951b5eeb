// A terminal progress bar for long jobs (data preparation, training): rate, ETA and a bar, redrawn
// in place at most every `min_redraw_s` on a terminal; on a pipe or file, a plain line every
// `line_interval_s` instead. Not thread-safe: one thread reports. Clock and tty-ness can be
// injected for tests (tests/cli/test_progress.cpp).
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>

namespace zt::cli {

struct ProgressOptions {
  std::FILE* out = stderr;
  int tty = -1;                   // 1 / 0: force; -1: ask isatty() about `out`
  bool bytes = false;             // count bytes (shown as kB/MB/GB) rather than plain units
  std::string unit = "it";        // the unit name when !bytes
  double min_redraw_s = 0.1;      // terminal redraw rate limit
  double line_interval_s = 5.0;   // seconds between plain lines when not a terminal
  int width = 30;                 // bar characters
  std::function<double()> clock;  // seconds; default: steady clock
};

class ProgressBar {
 public:
  // total == 0: unknown total (no bar, no ETA).
  ProgressBar(std::string label, uint64_t total, ProgressOptions options = {});

  // Sets the amount done so far; draws when the rate limit allows.
  void update(uint64_t done);
  // Draws the final state and ends the line. Idempotent.
  void finish();
  // Text shown after the rate and ETA, e.g. the live loss ("loss 3.21"); empty for none.
  void set_suffix(std::string suffix) { suffix_ = std::move(suffix); }

  bool is_tty() const { return tty_; }
  // The status text for `done` after `elapsed_s` seconds, e.g.
  // "prepare [=======>      ]  45%  1.9/4.2 MB  3.1 MB/s  ETA 0:01".
  std::string status(uint64_t done, double elapsed_s) const;

 private:
  void draw(uint64_t done, double now, bool final);

  std::string label_;
  uint64_t total_;
  ProgressOptions opt_;
  bool tty_;
  double start_;
  double last_draw_ = -1e300;
  uint64_t done_ = 0;
  uint64_t last_drawn_done_ = UINT64_MAX;
  bool finished_ = false;
  size_t last_len_ = 0;
  std::string suffix_;
};

// "1.5 kB", "12.3 MB": decimal units, for data sizes and rates (allocator.h's format_bytes gives
// binary units for memory).
std::string format_si_bytes(double bytes);
// "0:07", "12:34", "1:02:03".
std::string format_duration(double seconds);

}  // namespace zt::cli
