// Raster drawing for the training plots; see plot_canvas.h.
#include "zerotrain/monitor/plot_canvas.h"

#include <algorithm>
#include <cmath>

#include "zerotrain/core/error.h"
#include "zerotrain/monitor/plot_font.h"

namespace zt::monitor::plot {

namespace {

// Distance from point p to the segment a-b.
double segment_distance(double px, double py, double ax, double ay, double bx, double by) {
  const double dx = bx - ax, dy = by - ay;
  const double len2 = dx * dx + dy * dy;
  double t = len2 > 0 ? ((px - ax) * dx + (py - ay) * dy) / len2 : 0.0;
  t = std::clamp(t, 0.0, 1.0);
  const double qx = ax + t * dx - px, qy = ay + t * dy - py;
  return std::sqrt(qx * qx + qy * qy);
}

}  // namespace

Canvas::Canvas(int width, int height, Rgb background) {
  if (width <= 0 || height <= 0)
    throw ValueError("plot", str("canvas size ", width, "x", height, ": must be positive"));
  image_.width = width;
  image_.height = height;
  image_.pixels.resize(static_cast<size_t>(width) * static_cast<size_t>(height) * 3);
  for (size_t i = 0; i < image_.pixels.size(); i += 3) {
    image_.pixels[i] = background.r;
    image_.pixels[i + 1] = background.g;
    image_.pixels[i + 2] = background.b;
  }
  reset_clip();
}

Rgb Canvas::pixel(int x, int y) const {
  const size_t i =
      (static_cast<size_t>(y) * static_cast<size_t>(image_.width) + static_cast<size_t>(x)) * 3;
  return {image_.pixels[i], image_.pixels[i + 1], image_.pixels[i + 2]};
}

void Canvas::set_clip(int x0, int y0, int x1, int y1) {
  clip_x0_ = std::max(0, x0);
  clip_y0_ = std::max(0, y0);
  clip_x1_ = std::min(image_.width, x1);
  clip_y1_ = std::min(image_.height, y1);
}

void Canvas::reset_clip() {
  set_clip(0, 0, image_.width, image_.height);
}

void Canvas::blend(int x, int y, Rgb c, double alpha) {
  if (x < clip_x0_ || x >= clip_x1_ || y < clip_y0_ || y >= clip_y1_ || !(alpha > 0)) return;
  alpha = std::min(alpha, 1.0);
  uint8_t* p =
      image_.pixels.data() +
      (static_cast<size_t>(y) * static_cast<size_t>(image_.width) + static_cast<size_t>(x)) * 3;
  const uint8_t src[3] = {c.r, c.g, c.b};
  for (int k = 0; k < 3; ++k)
    p[k] = static_cast<uint8_t>(std::lround(p[k] + (src[k] - p[k]) * alpha));
}

void Canvas::fill_rect(int x0, int y0, int x1, int y1, Rgb c) {
  for (int y = std::max(y0, clip_y0_); y < std::min(y1, clip_y1_); ++y)
    for (int x = std::max(x0, clip_x0_); x < std::min(x1, clip_x1_); ++x)
      blend(x, y, c, 1.0);
}

void Canvas::line(double x0, double y0, double x1, double y1, double width, Rgb c, double alpha) {
  const double half = width / 2.0;
  const int xa = static_cast<int>(std::floor(std::min(x0, x1) - half - 1));
  const int xb = static_cast<int>(std::ceil(std::max(x0, x1) + half + 1));
  const int ya = static_cast<int>(std::floor(std::min(y0, y1) - half - 1));
  const int yb = static_cast<int>(std::ceil(std::max(y0, y1) + half + 1));
  for (int y = std::max(ya, clip_y0_); y <= std::min(yb, clip_y1_ - 1); ++y)
    for (int x = std::max(xa, clip_x0_); x <= std::min(xb, clip_x1_ - 1); ++x) {
      const double coverage = half + 0.5 - segment_distance(x, y, x0, y0, x1, y1);
      if (coverage > 0) blend(x, y, c, alpha * std::min(coverage, 1.0));
    }
}

void Canvas::dot(double x, double y, double radius, Rgb c, double alpha) {
  line(x, y, x, y, 2.0 * radius, c, alpha);
}

void Canvas::text(int x, int y, std::string_view s, Rgb c, int scale) {
  for (size_t i = 0; i < s.size(); ++i) {
    const int gx = x + static_cast<int>(i) * kGlyphAdvance * scale;
    for (int r = 0; r < kGlyphHeight; ++r) {
      const uint8_t bits = glyph_row(s[i], r);
      for (int col = 0; col < kGlyphWidth; ++col)
        if (bits & (1u << (kGlyphWidth - 1 - col)))
          fill_rect(gx + col * scale, y + r * scale, gx + (col + 1) * scale, y + (r + 1) * scale,
                    c);
    }
  }
}

int Canvas::text_width(std::string_view s, int scale) {
  if (s.empty()) return 0;
  return (static_cast<int>(s.size()) * kGlyphAdvance - 1) * scale;
}

int Canvas::text_height(int scale) {
  return kGlyphHeight * scale;
}

}  // namespace zt::monitor::plot
