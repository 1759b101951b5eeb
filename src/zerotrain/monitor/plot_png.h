// A self-contained PNG writer for the training plots (no libpng/zlib): 8-bit RGB, per-row adaptive
// filtering, and a zlib stream of one fixed-Huffman deflate block with LZ77 matches, which shrinks
// a plot's large flat areas to a few kilobytes. Tested by tests/monitor/test_plot_png.cpp, which
// decodes the stream back and compares every pixel.
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

// CRC-32 (ISO-HDLC, as PNG chunks use) and Adler-32 (as zlib streams end with).
uint32_t crc32(const uint8_t* data, size_t n);
uint32_t adler32(const uint8_t* data, size_t n);

// A zlib stream (RFC 1950) holding `data` in one fixed-Huffman deflate block (RFC 1951).
std::vector<uint8_t> zlib_compress(const std::vector<uint8_t>& data);

// The PNG file's bytes. Throws ValueError for non-positive sizes or a pixel buffer of the wrong
// length.
std::vector<uint8_t> encode_png(const RgbImage& image);
// Writes encode_png(image) to `path`; throws zt::Error("plot") naming the path when that fails.
void write_png(const std::filesystem::path& path, const RgbImage& image);

}  // namespace zt::monitor::plot
