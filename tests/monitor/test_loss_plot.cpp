// The loss / throughput picture: the smoothing and axis arithmetic it rests on, a PNG file that
// decodes (png_decode.h) to the rendered pixels with the requested size, the data visibly drawn in
// the right places (loss colour in the upper panel falling from left to right for a falling loss,
// throughput colour below), and errors.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include <unistd.h>

#include "monitor/png_decode.h"
#include "zerotrain/core/error.h"
#include "zerotrain/monitor/loss_plot.h"
#include "zerotrain/monitor/plot_axes.h"
#include "zerotrain/monitor/plot_font.h"

namespace zt {
namespace {

using monitor::LossPoint;

std::vector<LossPoint> falling_loss(int n) {
  std::mt19937 rng(11);
  std::normal_distribution<double> noise(0.0, 0.08);
  std::vector<LossPoint> out;
  for (int s = 1; s <= n; ++s) {
    LossPoint m;
    m.step = s;
    m.loss = 2.0 + 8.0 * std::exp(-s / 60.0) + noise(rng);
    m.tokens_per_s = 40000.0 + 3000.0 * std::sin(s / 10.0);
    out.push_back(m);
  }
  return out;
}

TEST(TrainLossPlot, EmaIsDebiased) {
  const std::vector<double> s = monitor::ema_smooth({1.0, 0.0}, 0.5);
  EXPECT_DOUBLE_EQ(s[0], 1.0);        // (0.5 * 1) / (1 - 0.5)
  EXPECT_DOUBLE_EQ(s[1], 1.0 / 3.0);  // (0.25 + 0) / (1 - 0.25)
  for (double v : monitor::ema_smooth(std::vector<double>(50, 3.25), 0.9))
    EXPECT_NEAR(v, 3.25, 1e-12);
  EXPECT_EQ(monitor::ema_smooth({4.0, 5.0}, 0.0), (std::vector<double>{4.0, 5.0}));
  EXPECT_THROW(monitor::ema_smooth({1.0}, 1.0), ValueError);
}

TEST(TrainLossPlot, NiceAxesAndLabels) {
  const monitor::plot::Axis a = monitor::plot::nice_axis(0.0, 97.0, 5, true);
  EXPECT_DOUBLE_EQ(a.step, 20.0);
  EXPECT_DOUBLE_EQ(a.lo, 0.0);
  EXPECT_DOUBLE_EQ(a.hi, 100.0);
  EXPECT_EQ(a.ticks.size(), 6u);
  const monitor::plot::Axis b = monitor::plot::nice_axis(2.31, 2.87, 6, true);
  EXPECT_NEAR(b.step, 0.1, 1e-15);
  EXPECT_NEAR(b.lo, 2.3, 1e-12);
  EXPECT_NEAR(b.hi, 2.9, 1e-12);
  ASSERT_EQ(b.ticks.size(), 7u);
  EXPECT_EQ(monitor::plot::tick_label(b.ticks[3], b.step), "2.6");
  const monitor::plot::Axis steps = monitor::plot::nice_axis(1.0, 1000.0, 8, false);
  EXPECT_DOUBLE_EQ(steps.lo, 1.0);  // not expanded
  EXPECT_DOUBLE_EQ(steps.step, 100.0);
  EXPECT_DOUBLE_EQ(steps.ticks.front(), 100.0);
  EXPECT_DOUBLE_EQ(steps.ticks.back(), 1000.0);
  const monitor::plot::Axis few_steps = monitor::plot::nice_axis(1.0, 5.0, 8, false, 1.0);
  EXPECT_DOUBLE_EQ(few_steps.step, 1.0);  // no ticks between whole steps
  EXPECT_EQ(few_steps.ticks, (std::vector<double>{1, 2, 3, 4, 5}));
  const monitor::plot::Axis flat = monitor::plot::nice_axis(5.0, 5.0, 4, true);
  EXPECT_LT(flat.lo, 5.0);
  EXPECT_GT(flat.hi, 5.0);
  EXPECT_EQ(monitor::plot::tick_label(40000.0, 10000.0), "40k");
  EXPECT_EQ(monitor::plot::tick_label(45000.0, 5000.0), "45k");
  EXPECT_EQ(monitor::plot::tick_label(1.5e7, 5e6), "15M");
  EXPECT_EQ(monitor::plot::tick_label(0.05, 0.05), "0.05");
  EXPECT_EQ(monitor::plot::tick_label(1e-17, 0.1), "0");
  EXPECT_EQ(monitor::plot::tick_label(250.0, 50.0), "250");
}

TEST(TrainLossPlot, FontCoversPrintableAscii) {
  // '-' is one full row; 'I' has its bar in the middle column; unknown characters draw as '?'.
  EXPECT_EQ(monitor::plot::glyph_row('-', 3), 0b11111);
  EXPECT_EQ(monitor::plot::glyph_row('I', 3), 0b00100);
  EXPECT_EQ(monitor::plot::glyph_row(' ', 3), 0);
  for (int r = 0; r < monitor::plot::kGlyphHeight; ++r)
    EXPECT_EQ(monitor::plot::glyph_row('\x7f', r), monitor::plot::glyph_row('?', r));
  int inked = 0;
  for (char c = '!'; c <= '~'; ++c) {
    int rows = 0;
    for (int r = 0; r < monitor::plot::kGlyphHeight; ++r)
      rows += monitor::plot::glyph_row(c, r) != 0;
    inked += rows > 0;
  }
  EXPECT_EQ(inked, '~' - '!' + 1);
}

// Pixels close to `c` (the plot's loss blue or throughput orange, blended at least halfway).
bool near_colour(const monitor::plot::RgbImage& img, int x, int y, int r, int g, int b) {
  const uint8_t* p = &img.pixels[(static_cast<size_t>(y) * img.width + x) * 3];
  return std::abs(p[0] - r) < 40 && std::abs(p[1] - g) < 40 && std::abs(p[2] - b) < 40;
}

// Mean row of the loss-coloured pixels in columns [x0, x1) of the upper part of the image.
double mean_blue_row(const monitor::plot::RgbImage& img, int x0, int x1, int y_end, int* count) {
  double sum = 0;
  *count = 0;
  for (int y = 60; y < y_end; ++y)
    for (int x = x0; x < x1; ++x)
      if (near_colour(img, x, y, 31, 119, 180)) {
        sum += y;
        ++*count;
      }
  return *count ? sum / *count : 0.0;
}

TEST(TrainLossPlot, WritesAPngOfTheDataAtTheRequestedSize) {
  const std::vector<LossPoint> records = falling_loss(300);
  monitor::LossPlotOptions o;
  o.title = "llama-1b: loss";
  o.width = 800;
  o.height = 500;
  const std::filesystem::path path = std::filesystem::temp_directory_path() /
                                     ("zt_test_loss_" + std::to_string(::getpid()) + ".png");
  monitor::write_loss_plot(path, records, o);
  std::ifstream in(path, std::ios::binary);
  const std::vector<uint8_t> bytes{std::istreambuf_iterator<char>(in), {}};
  std::filesystem::remove(path);
  const monitor::plot::RgbImage img = test::decode_png(bytes);
  ASSERT_EQ(img.width, 800);
  ASSERT_EQ(img.height, 500);
  EXPECT_TRUE(img.pixels == monitor::render_loss_plot(records, o).pixels);
  EXPECT_LT(bytes.size(), 120000u);  // a plot compresses well

  // The loss falls: its pixels sit lower (larger rows) on the right than on the left.
  const int upper = img.height * 6 / 10;
  int left_n = 0, right_n = 0;
  const double left = mean_blue_row(img, 100, 300, upper, &left_n);
  const double right = mean_blue_row(img, 600, 780, upper, &right_n);
  ASSERT_GT(left_n, 50);
  ASSERT_GT(right_n, 50);
  EXPECT_LT(left + 40, right);
  // Throughput is drawn in its own colour in the lower part, and only there.
  int orange_low = 0, orange_high = 0;
  for (int y = 0; y < img.height; ++y)
    for (int x = 0; x < img.width; ++x)
      if (near_colour(img, x, y, 214, 110, 20)) (y >= upper ? orange_low : orange_high) += 1;
  EXPECT_GT(orange_low, 500);
  EXPECT_LT(orange_high, orange_low / 5);  // the header text only

  // A rising loss puts the right side higher instead.
  std::vector<LossPoint> rising = records;
  for (LossPoint& m : rising)
    m.loss = 12.0 - m.loss;
  const monitor::plot::RgbImage up = monitor::render_loss_plot(rising, o);
  EXPECT_GT(mean_blue_row(up, 100, 300, upper, &left_n),
            mean_blue_row(up, 600, 780, upper, &right_n) + 40);
}

TEST(TrainLossPlot, HandlesSparseAndDegenerateData) {
  std::vector<LossPoint> one(1);
  one[0].step = 7;
  one[0].loss = 3.0;
  const monitor::plot::RgbImage img = monitor::render_loss_plot(one);  // zero-width axes widened
  EXPECT_EQ(img.width, 960);
  std::vector<LossPoint> gaps = falling_loss(40);
  for (size_t i = 0; i < gaps.size(); i += 3)
    gaps[i].loss = NAN;  // skipped, not plotted as 0
  for (LossPoint& m : gaps)
    m.tokens_per_s = NAN;  // no throughput at all
  EXPECT_NO_THROW(monitor::render_loss_plot(gaps));
  monitor::LossPlotOptions raw;
  raw.smoothing = 0;
  EXPECT_NO_THROW(monitor::render_loss_plot(gaps, raw));
}

TEST(TrainLossPlot, RejectsNoDataAndBadOptions) {
  std::vector<LossPoint> none(3);  // losses are NaN by default
  EXPECT_THROW(monitor::render_loss_plot(none), ValueError);
  EXPECT_THROW(monitor::render_loss_plot({}), ValueError);
  const std::vector<LossPoint> data = falling_loss(10);
  monitor::LossPlotOptions o;
  o.width = 100;
  EXPECT_THROW(monitor::render_loss_plot(data, o), ValueError);
  o = {};
  o.smoothing = 1.0;
  EXPECT_THROW(monitor::render_loss_plot(data, o), ValueError);
}

}  // namespace
}  // namespace zt
