// ProgressBar drawing and formatting.
#include "zerotrain/cli/progress.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

namespace zt::cli {
namespace {

double steady_seconds() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

std::string format_count(double v) {
  char buf[32];
  if (v >= 1e9) {
    std::snprintf(buf, sizeof buf, "%.2fG", v / 1e9);
  } else if (v >= 1e6) {
    std::snprintf(buf, sizeof buf, "%.2fM", v / 1e6);
  } else if (v >= 1e4) {
    std::snprintf(buf, sizeof buf, "%.1fk", v / 1e3);
  } else {
    std::snprintf(buf, sizeof buf, "%.0f", v);
  }
  return buf;
}

}  // namespace

std::string format_si_bytes(double bytes) {
  static const char* units[] = {"B", "kB", "MB", "GB", "TB"};
  int u = 0;
  while (bytes >= 1000.0 && u < 4) {
    bytes /= 1000.0;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", bytes, units[u]);
  return buf;
}

std::string format_duration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  const auto s = static_cast<long long>(std::llround(seconds));
  char buf[32];
  if (s >= 3600) {
    std::snprintf(buf, sizeof buf, "%lld:%02lld:%02lld", s / 3600, (s / 60) % 60, s % 60);
  } else {
    std::snprintf(buf, sizeof buf, "%lld:%02lld", s / 60, s % 60);
  }
  return buf;
}

ProgressBar::ProgressBar(std::string label, uint64_t total, ProgressOptions options)
    : label_(std::move(label)), total_(total), opt_(std::move(options)) {
  if (!opt_.clock) opt_.clock = steady_seconds;
  tty_ = opt_.tty >= 0 ? opt_.tty == 1 : ::isatty(::fileno(opt_.out)) == 1;
  start_ = opt_.clock();
}

std::string ProgressBar::status(uint64_t done, double elapsed_s) const {
  const double rate = elapsed_s > 0 ? static_cast<double>(done) / elapsed_s : 0.0;
  auto amount = [&](double v) {
    return opt_.bytes ? format_si_bytes(v) : format_count(v) + " " + opt_.unit;
  };
  std::string s = label_;
  if (total_ > 0) {
    const double frac = std::min(1.0, static_cast<double>(done) / static_cast<double>(total_));
    const int filled = static_cast<int>(frac * opt_.width);
    std::string bar(static_cast<size_t>(opt_.width), ' ');
    for (int i = 0; i < filled; ++i)
      bar[static_cast<size_t>(i)] = '=';
    if (filled < opt_.width) bar[static_cast<size_t>(filled)] = '>';
    char pct[16];
    std::snprintf(pct, sizeof pct, "%3d%%", static_cast<int>(frac * 100.0));
    s += " [" + bar + "] " + pct + "  " + amount(static_cast<double>(done)) + " / " +
         amount(static_cast<double>(total_));
  } else {
    s += "  " + amount(static_cast<double>(done));
  }
  s += "  " + amount(rate) + "/s";
  if (total_ > 0) {
    const double left = static_cast<double>(total_ > done ? total_ - done : 0);
    s += "  ETA " + (rate > 0 ? format_duration(left / rate) : std::string("?"));
  } else {
    s += "  " + format_duration(elapsed_s);
  }
  if (!suffix_.empty()) s += "  " + suffix_;
  return s;
}

void ProgressBar::draw(uint64_t done, double now, bool final) {
  const std::string s = status(done, now - start_);
  if (tty_) {
    // Pad over the previous, possibly longer, line.
    std::string padded = s;
    if (padded.size() < last_len_) padded.append(last_len_ - padded.size(), ' ');
    std::fprintf(opt_.out, "\r%s%s", padded.c_str(), final ? "\n" : "");
    last_len_ = s.size();
  } else {
    std::fprintf(opt_.out, "%s\n", s.c_str());
  }
  std::fflush(opt_.out);
  last_draw_ = now;
  last_drawn_done_ = done;
}

void ProgressBar::update(uint64_t done) {
  if (finished_) return;
  done_ = done;
  const double now = opt_.clock();
  const double interval = tty_ ? opt_.min_redraw_s : opt_.line_interval_s;
  if (now - last_draw_ >= interval) draw(done, now, false);
}

void ProgressBar::finish() {
  if (finished_) return;
  finished_ = true;
  // A plain line already showing the final amount is not repeated.
  if (tty_ || last_drawn_done_ != done_) draw(done_, opt_.clock(), true);
}

}  // namespace zt::cli
