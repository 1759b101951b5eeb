// The training-progress picture: a PNG with the loss over steps on top (raw values as faint dots,
// an exponentially smoothed line over them, and the validation loss of each evaluation as a second
// curve in its own color) and tokens/s below, sharing the step axis.
// Tested by tests/monitor/test_loss_plot.cpp.
#pragma once

#include <cstdint>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "zerotrain/monitor/metrics.h"
#include "zerotrain/monitor/plot_png.h"

namespace zt::monitor {

// One step as the picture draws it. A run keeps one per step to the end, so this holds only what
// is drawn (24 bytes; a whole StepMetrics per step grew every rank by ~290 bytes a step, found by
// the soak of tests/faults/soak.py).
struct LossPoint {
  int64_t step = 0;
  double loss = std::numeric_limits<double>::quiet_NaN();
  double tokens_per_s = 0;  // all ranks together
};

struct LossPlotOptions {
  std::string title = "training loss";
  int width = 960;   // pixels, >= 480
  int height = 640;  // pixels, >= 360
  // EMA weight in [0, 1): s_t = w s_(t-1) + (1 - w) x_t, debiased by 1 - w^t as TensorBoard does.
  // 0 draws the raw loss as the line.
  double smoothing = 0.9;
};

// Debiased exponential moving average of `xs` (see LossPlotOptions::smoothing).
std::vector<double> ema_smooth(const std::vector<double>& xs, double weight);

// The picture of `points` (points without a finite loss or tokens/s are left out of that panel).
// Throws ValueError when no point has a finite loss, or for bad options (naming the field).
plot::RgbImage render_loss_plot(const std::vector<LossPoint>& points,
                                const LossPlotOptions& options = {});
// With the validation losses of `evals` (those with a finite loss) as a second curve on the loss
// panel; its axes span both curves.
plot::RgbImage render_loss_plot(const std::vector<LossPoint>& points,
                                const std::vector<EvalMetrics>& evals,
                                const LossPlotOptions& options = {});
// render_loss_plot written as PNG to `path`.
void write_loss_plot(const std::filesystem::path& path, const std::vector<LossPoint>& points,
                     const LossPlotOptions& options = {});
void write_loss_plot(const std::filesystem::path& path, const std::vector<LossPoint>& points,
                     const std::vector<EvalMetrics>& evals, const LossPlotOptions& options = {});

}  // namespace zt::monitor
