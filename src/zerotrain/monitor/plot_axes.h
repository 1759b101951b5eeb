// Axis arithmetic for the training plots: "nice" tick steps (1, 2 or 5 times a power of ten), tick
// positions, and compact tick labels ("0.05", "250", "40k", "1.5M").
// Tested by tests/monitor/test_loss_plot.cpp.
#pragma once

#include <string>
#include <vector>

namespace zt::monitor::plot {

struct Axis {
  double lo = 0, hi = 1;      // the plotted range
  double step = 1;            // distance between ticks
  std::vector<double> ticks;  // multiples of step inside [lo, hi]
};

// About `target` ticks over [lo, hi], at least `min_step` apart (1 for the integer step axis).
// expand: widen the range out to whole ticks (for value axes); otherwise keep it as given (for the
// step axis). A zero-width range is widened around its value.
Axis nice_axis(double lo, double hi, int target, bool expand, double min_step = 0);

// The label of tick value v on an axis whose ticks are `step` apart.
std::string tick_label(double v, double step);

}  // namespace zt::monitor::plot
