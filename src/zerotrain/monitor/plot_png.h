// A PNG writer for the training plots: 8-bit RGB, per-row adaptive filtering, the rows compressed
// by zlib at its best level (a plot's large flat areas shrink to a few kilobytes) and the chunk
// CRCs from zlib's crc32. Tested by tests/monitor/test_plot_png.cpp, which inflates the stream
// back and compares every pixel.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <vector>

namespace zt::monitor::plot {

struct RgbImage {
  int width = 0;
  int height = 0;
  std::vector<uint8_t> pixels;  // [height, width, 3] u8, rows top to bottom
};

// A zlib stream (RFC 1950) of `data`, compressed by zlib at Z_BEST_COMPRESSION. Throws
// zt::Error("plot") when zlib fails.
std::vector<uint8_t> zlib_compress(const std::vector<uint8_t>& data);

// The PNG file's bytes. Throws ValueError for non-positive sizes or a pixel buffer of the wrong
// length.
std::vector<uint8_t> encode_png(const RgbImage& image);
// Writes encode_png(image) to `path`; throws zt::Error("plot") naming the path when that fails.
void write_png(const std::filesystem::path& path, const RgbImage& image);

}  // namespace zt::monitor::plot
