// A small RGB raster for the training plots: rectangles, anti-aliased lines and dots, and text in
// the 5x7 font of plot_font.h scaled by whole pixels. Drawing outside the clip rectangle is
// dropped. Tested through tests/monitor/test_loss_plot.cpp.
#pragma once

#include <cstdint>
#include <string_view>

#include "zerotrain/monitor/plot_png.h"

namespace zt::monitor::plot {

struct Rgb {
  uint8_t r = 0, g = 0, b = 0;
  bool operator==(const Rgb&) const = default;
};

class Canvas {
 public:
  Canvas(int width, int height, Rgb background);

  int width() const { return image_.width; }
  int height() const { return image_.height; }
  const RgbImage& image() const { return image_; }
  Rgb pixel(int x, int y) const;  // (x, y) inside the canvas

  // Drawing is limited to [x0, x1) x [y0, y1) (intersected with the canvas) until reset_clip.
  void set_clip(int x0, int y0, int x1, int y1);
  void reset_clip();

  // Mixes `c` into pixel (x, y) with weight alpha in [0, 1].
  void blend(int x, int y, Rgb c, double alpha);
  void fill_rect(int x0, int y0, int x1, int y1, Rgb c);  // [x0, x1) x [y0, y1)
  // A segment of the given width between pixel-centre coordinates, with soft edges.
  void line(double x0, double y0, double x1, double y1, double width, Rgb c, double alpha = 1.0);
  void dot(double x, double y, double radius, Rgb c, double alpha = 1.0);
  // Text with its top-left corner at (x, y); each font pixel becomes a scale x scale square.
  void text(int x, int y, std::string_view s, Rgb c, int scale = 1);

  static int text_width(std::string_view s, int scale);
  static int text_height(int scale);

 private:
  RgbImage image_;
  int clip_x0_ = 0, clip_y0_ = 0, clip_x1_ = 0, clip_y1_ = 0;
};

}  // namespace zt::monitor::plot
