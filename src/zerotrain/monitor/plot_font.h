// A 5x7 bitmap font covering printable ASCII, for the text of the training plots (plot_canvas.h).
// Lowercase descenders are squeezed into the 7 rows. Tested through
// tests/monitor/test_loss_plot.cpp.
#pragma once

#include <cstdint>

namespace zt::monitor::plot {

constexpr int kGlyphWidth = 5;
constexpr int kGlyphHeight = 7;
constexpr int kGlyphAdvance = 6;  // one blank column between characters

// Row `row` (0 = top) of the glyph of `c` as 5 bits, bit 4 being the leftmost column. Characters
// outside printable ASCII draw as '?'.
uint8_t glyph_row(char c, int row);

}  // namespace zt::monitor::plot
