// Layout and drawing of the loss / throughput picture; see loss_plot.h.
#include "zerotrain/monitor/loss_plot.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "zerotrain/core/error.h"
#include "zerotrain/monitor/plot_axes.h"
#include "zerotrain/monitor/plot_canvas.h"

namespace zt::monitor {

namespace {

using plot::Axis;
using plot::Canvas;
using plot::Rgb;

constexpr std::string_view kComponent = "loss_plot";
constexpr int kText = 2;  // font scale: 10x14-pixel characters

constexpr Rgb kBackground{255, 255, 255};
constexpr Rgb kInk{40, 40, 40};
constexpr Rgb kFrame{150, 150, 150};
constexpr Rgb kGrid{230, 230, 230};
constexpr Rgb kLossColor{31, 119, 180};
constexpr Rgb kSpeedColor{214, 110, 20};
constexpr Rgb kEvalColor{44, 160, 44};

struct Series {
  std::vector<double> x, y;
};

struct Rect {
  int x0, y0, x1, y1;  // [x0, x1) x [y0, y1)
};

// Maps data coordinates into a panel's rectangle.
struct Frame {
  Rect r;
  Axis xa, ya;
  double px(double x) const { return r.x0 + (x - xa.lo) / (xa.hi - xa.lo) * (r.x1 - 1 - r.x0); }
  double py(double y) const { return r.y1 - 1 - (y - ya.lo) / (ya.hi - ya.lo) * (r.y1 - 1 - r.y0); }
};

// A value for the panel headers: whole numbers from 1000 up ("41885"), 4 digits below ("2.351").
std::string compact(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, std::fabs(v) >= 1000 ? "%.0f" : "%.4g", v);
  return buf;
}

// Grid, frame and y tick labels of one panel; vertical grid at the x ticks.
void draw_panel(Canvas& c, const Frame& f) {
  for (double t : f.ya.ticks) {
    const int y = static_cast<int>(std::lround(f.py(t)));
    c.fill_rect(f.r.x0, y, f.r.x1, y + 1, kGrid);
    const std::string label = plot::tick_label(t, f.ya.step);
    c.text(f.r.x0 - 8 - Canvas::text_width(label, kText), y - Canvas::text_height(kText) / 2, label,
           kInk, kText);
  }
  for (double t : f.xa.ticks) {
    const int x = static_cast<int>(std::lround(f.px(t)));
    c.fill_rect(x, f.r.y0, x + 1, f.r.y1, kGrid);
  }
  c.fill_rect(f.r.x0, f.r.y0, f.r.x1, f.r.y0 + 1, kFrame);
  c.fill_rect(f.r.x0, f.r.y1 - 1, f.r.x1, f.r.y1, kFrame);
  c.fill_rect(f.r.x0, f.r.y0, f.r.x0 + 1, f.r.y1, kFrame);
  c.fill_rect(f.r.x1 - 1, f.r.y0, f.r.x1, f.r.y1, kFrame);
}

void draw_polyline(Canvas& c, const Frame& f, const Series& s, double width, Rgb color) {
  c.set_clip(f.r.x0, f.r.y0, f.r.x1, f.r.y1);
  if (s.x.size() == 1) c.dot(f.px(s.x[0]), f.py(s.y[0]), width, color);
  for (size_t i = 1; i < s.x.size(); ++i)
    c.line(f.px(s.x[i - 1]), f.py(s.y[i - 1]), f.px(s.x[i]), f.py(s.y[i]), width, color);
  c.reset_clip();
}

void draw_dots(Canvas& c, const Frame& f, const Series& s, double radius, Rgb color, double alpha) {
  c.set_clip(f.r.x0, f.r.y0, f.r.x1, f.r.y1);
  for (size_t i = 0; i < s.x.size(); ++i)
    c.dot(f.px(s.x[i]), f.py(s.y[i]), radius, color, alpha);
  c.reset_clip();
}

std::pair<double, double> min_max(const std::vector<double>& v) {
  const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  return {*lo, *hi};
}

void check_options(const LossPlotOptions& o) {
  if (o.width < 480) throw ValueError(kComponent, str("width = ", o.width, ": must be >= 480"));
  if (o.height < 360) throw ValueError(kComponent, str("height = ", o.height, ": must be >= 360"));
  if (!(o.smoothing >= 0 && o.smoothing < 1))
    throw ValueError(kComponent, str("smoothing = ", o.smoothing, ": must be in [0, 1)"));
}

}  // namespace

std::vector<double> ema_smooth(const std::vector<double>& xs, double weight) {
  if (!(weight >= 0 && weight < 1))
    throw ValueError(kComponent, str("smoothing = ", weight, ": must be in [0, 1)"));
  std::vector<double> out(xs.size());
  double s = 0, debias = 1;
  for (size_t i = 0; i < xs.size(); ++i) {
    s = weight * s + (1 - weight) * xs[i];
    debias *= weight;
    out[i] = s / (1 - debias);
  }
  return out;
}

plot::RgbImage render_loss_plot(const std::vector<LossPoint>& points,
                                const LossPlotOptions& options) {
  return render_loss_plot(points, {}, options);
}

plot::RgbImage render_loss_plot(const std::vector<LossPoint>& points,
                                const std::vector<EvalMetrics>& evals,
                                const LossPlotOptions& options) {
  check_options(options);
  Series loss, speed, eval;
  for (const EvalMetrics& e : evals)
    if (std::isfinite(e.loss)) {
      eval.x.push_back(static_cast<double>(e.step));
      eval.y.push_back(e.loss);
    }
  for (const LossPoint& m : points) {
    const auto step = static_cast<double>(m.step);
    if (std::isfinite(m.loss)) {
      loss.x.push_back(step);
      loss.y.push_back(m.loss);
    }
    if (std::isfinite(m.tokens_per_s)) {
      speed.x.push_back(step);
      speed.y.push_back(m.tokens_per_s);
    }
  }
  if (loss.x.empty())
    throw ValueError(kComponent, str("no point with a finite loss among ", points.size()));
  Series smooth{loss.x, options.smoothing > 0 ? ema_smooth(loss.y, options.smoothing) : loss.y};

  // The step axis spans both series; value axes are expanded to whole ticks.
  double x_lo = loss.x.front(), x_hi = loss.x.back();
  for (const Series* s : {&loss, &speed, &eval})
    if (!s->x.empty()) {
      const auto [lo, hi] = min_max(s->x);
      x_lo = std::min(x_lo, lo);
      x_hi = std::max(x_hi, hi);
    }
  const Axis xa = plot::nice_axis(x_lo, x_hi, 8, false, 1.0);
  auto [loss_lo, loss_hi] = min_max(loss.y);
  if (!eval.y.empty()) {
    const auto [lo, hi] = min_max(eval.y);
    loss_lo = std::min(loss_lo, lo);
    loss_hi = std::max(loss_hi, hi);
  }
  const Axis loss_axis = plot::nice_axis(loss_lo, loss_hi, 6, true);
  const double speed_hi = speed.y.empty() ? 1.0 : std::max(min_max(speed.y).second, 1.0);
  const Axis speed_axis = plot::nice_axis(0.0, speed_hi, 3, true);

  // Layout: title, loss header + panel, throughput header + panel, step labels.
  const int char_h = Canvas::text_height(kText);
  int label_w = 0;
  for (const Axis* a : {&loss_axis, &speed_axis})
    for (double t : a->ticks)
      label_w = std::max(label_w, Canvas::text_width(plot::tick_label(t, a->step), kText));
  const int left = 16 + label_w + 8, right = options.width - 24;
  const int title_h = 44, header_h = 28, bottom_h = 56, gap = 14;
  const int panels_h = options.height - title_h - 2 * header_h - gap - bottom_h;
  const int loss_h = panels_h * 7 / 10;
  const Rect loss_rect{left, title_h + header_h, right, title_h + header_h + loss_h};
  const int speed_top = loss_rect.y1 + gap + header_h;
  const Rect speed_rect{left, speed_top, right, speed_top + panels_h - loss_h};
  const Frame loss_frame{loss_rect, xa, loss_axis};
  const Frame speed_frame{speed_rect, xa, speed_axis};

  Canvas c(options.width, options.height, kBackground);
  c.text((options.width - Canvas::text_width(options.title, kText)) / 2, 14, options.title, kInk,
         kText);

  std::string loss_header = "loss: " + compact(loss.y.back());
  if (options.smoothing > 0)
    loss_header += "  (EMA " + compact(options.smoothing) + ": " + compact(smooth.y.back()) + ")";
  loss_header += "  at step " + std::to_string(static_cast<int64_t>(loss.x.back()));
  c.text(left, loss_rect.y0 - header_h + 6, loss_header, kLossColor, kText);
  draw_panel(c, loss_frame);
  if (options.smoothing > 0) {
    // Raw points: faint where they crowd (about one per pixel column or more), bolder when sparse.
    const double per_column = static_cast<double>(loss.x.size()) / (right - left);
    const double alpha = std::clamp(0.35 / per_column, 0.3, 0.85);
    draw_dots(c, loss_frame, loss, per_column < 0.2 ? 2.5 : 1.6, kLossColor, alpha);
  }
  draw_polyline(c, loss_frame, smooth, 2.0, kLossColor);
  if (!eval.x.empty()) {
    // The validation loss: its points joined by a line, in its own color, named in the header.
    draw_polyline(c, loss_frame, eval, 2.0, kEvalColor);
    draw_dots(c, loss_frame, eval, 3.5, kEvalColor, 1.0);
    const std::string eval_header = "eval: " + compact(eval.y.back());
    c.text(right - Canvas::text_width(eval_header, kText), loss_rect.y0 - header_h + 6, eval_header,
           kEvalColor, kText);
  }

  std::string speed_header = "tokens/s";
  if (!speed.y.empty()) {
    double sum = 0;
    for (double v : speed.y)
      sum += v;
    speed_header += ": " + compact(speed.y.back()) + "  (mean " +
                    compact(sum / static_cast<double>(speed.y.size())) + ")";
  }
  c.text(left, speed_rect.y0 - header_h + 6, speed_header, kSpeedColor, kText);
  draw_panel(c, speed_frame);
  draw_polyline(c, speed_frame, speed, 1.5, kSpeedColor);

  for (double t : xa.ticks) {
    const std::string label = plot::tick_label(t, xa.step);
    const int x = static_cast<int>(std::lround(speed_frame.px(t)));
    c.text(x - Canvas::text_width(label, kText) / 2, speed_rect.y1 + 8, label, kInk, kText);
  }
  c.text((left + right - Canvas::text_width("step", kText)) / 2, speed_rect.y1 + 16 + char_h,
         "step", kInk, kText);
  return c.image();
}

void write_loss_plot(const std::filesystem::path& path, const std::vector<LossPoint>& points,
                     const LossPlotOptions& options) {
  plot::write_png(path, render_loss_plot(points, options));
}

void write_loss_plot(const std::filesystem::path& path, const std::vector<LossPoint>& points,
                     const std::vector<EvalMetrics>& evals, const LossPlotOptions& options) {
  plot::write_png(path, render_loss_plot(points, evals, options));
}

}  // namespace zt::monitor
