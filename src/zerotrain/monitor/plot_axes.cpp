// Tick steps, positions and labels; see plot_axes.h.
#include "zerotrain/monitor/plot_axes.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace zt::monitor::plot {

namespace {

double nice_step(double range, int target) {
  const double raw = range / std::max(1, target);
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  const double f = raw / mag;
  const double nice = f < 1.5 ? 1.0 : f < 3.0 ? 2.0 : f < 7.0 ? 5.0 : 10.0;
  return nice * mag;
}

// Digits after the point needed to tell ticks `step` apart.
int decimals_for(double step) {
  return std::max(0, static_cast<int>(-std::floor(std::log10(step) + 1e-9)));
}

}  // namespace

Axis nice_axis(double lo, double hi, int target, bool expand, double min_step) {
  Axis a;
  if (!(hi - lo > 1e-9 * std::max({1.0, std::fabs(lo), std::fabs(hi)}))) {
    const double pad = lo == 0 ? 1.0 : std::fabs(lo) * 0.1;
    lo -= pad;
    hi += pad;
  }
  a.step = std::max(nice_step(hi - lo, target), min_step);
  if (expand) {
    lo = std::floor(lo / a.step) * a.step;
    hi = std::ceil(hi / a.step) * a.step;
  }
  a.lo = lo;
  a.hi = hi;
  const double first = std::ceil(lo / a.step - 1e-9);
  for (double k = first;; k += 1.0) {
    const double v = k * a.step;
    if (v > hi + a.step * 1e-9) break;
    a.ticks.push_back(v);
  }
  return a;
}

std::string tick_label(double v, double step) {
  if (std::fabs(v) < step * 1e-6) return "0";
  char buf[48];
  const char* suffix = "";
  double scale = 1.0;
  if (std::fabs(v) >= 1e7 && step >= 1e5) {
    suffix = "M";
    scale = 1e6;
  } else if (std::fabs(v) >= 1e4 && step >= 100) {
    suffix = "k";
    scale = 1e3;
  }
  std::snprintf(buf, sizeof buf, "%.*f%s", decimals_for(step / scale), v / scale, suffix);
  return buf;
}

}  // namespace zt::monitor::plot
