// The PNG writer: its zlib streams inflate back into the input (empty, random, long runs, far
// repeats, every match length), PNG files decode (png_decode.h) to the exact pixels, flat images
// compress to a few kilobytes, and errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include <unistd.h>

#include "monitor/png_decode.h"
#include "zerotrain/core/error.h"
#include "zerotrain/monitor/plot_png.h"

namespace zt {
namespace {

using monitor::plot::RgbImage;

std::vector<uint8_t> bytes_of(const std::string& s) {
  return {s.begin(), s.end()};
}

TEST(TrainPlotPng, ZlibStreamsInflateBackToTheInput) {
  std::mt19937 rng(7);
  std::vector<std::vector<uint8_t>> inputs;
  inputs.push_back({});
  inputs.push_back(bytes_of("a"));
  inputs.push_back(bytes_of("abcabcabcabcabcabcabcabcabcabcabcabcabcabcabx"));
  std::vector<uint8_t> noise(5000);
  for (auto& b : noise)
    b = static_cast<uint8_t>(rng());
  inputs.push_back(noise);
  inputs.push_back(std::vector<uint8_t>(100000, 0x5A));  // runs far longer than 258
  // A block of noise repeated 40 KiB later: the farthest distances and distance codes.
  std::vector<uint8_t> far(noise.begin(), noise.begin() + 2000);
  for (int i = 0; i < 30000; ++i)
    far.push_back(static_cast<uint8_t>(i * 7));
  far.insert(far.end(), noise.begin(), noise.begin() + 2000);
  inputs.push_back(far);
  // Every match length 3..258 once: a fresh pattern, then a repeat of its first len bytes.
  std::vector<uint8_t> lengths;
  for (int len = 3; len <= 258; ++len) {
    std::vector<uint8_t> pat(static_cast<size_t>(len) + 5);
    for (auto& b : pat)
      b = static_cast<uint8_t>(rng());
    lengths.insert(lengths.end(), pat.begin(), pat.end());
    lengths.insert(lengths.end(), pat.begin(), pat.begin() + len);
  }
  inputs.push_back(lengths);
  for (size_t i = 0; i < inputs.size(); ++i) {
    SCOPED_TRACE("input " + std::to_string(i) + " of " + std::to_string(inputs[i].size()) +
                 " bytes");
    const std::vector<uint8_t> z = monitor::plot::zlib_compress(inputs[i]);
    EXPECT_EQ(test::zlib_inflate(z), inputs[i]);
  }
  EXPECT_LT(monitor::plot::zlib_compress(inputs[4]).size(), 2000u);  // 100 KB of one byte
}

RgbImage test_image(int w, int h) {
  RgbImage img{w, h, std::vector<uint8_t>(static_cast<size_t>(w) * h * 3)};
  std::mt19937 rng(3);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      uint8_t* p = &img.pixels[(static_cast<size_t>(y) * w + x) * 3];
      if (x < w / 3) {  // noise
        p[0] = static_cast<uint8_t>(rng());
        p[1] = static_cast<uint8_t>(rng());
        p[2] = static_cast<uint8_t>(rng());
      } else if (x < 2 * w / 3) {  // gradients
        p[0] = static_cast<uint8_t>(x * 3);
        p[1] = static_cast<uint8_t>(y * 5);
        p[2] = static_cast<uint8_t>(x + y);
      } else {  // flat
        p[0] = 250;
        p[1] = 250;
        p[2] = 245;
      }
    }
  return img;
}

TEST(TrainPlotPng, EncodedImagesDecodeToTheSamePixels) {
  for (auto [w, h] : {std::pair{1, 1}, {3, 2}, {97, 61}, {640, 20}}) {
    SCOPED_TRACE(std::to_string(w) + "x" + std::to_string(h));
    const RgbImage img = test_image(w, h);
    const RgbImage back = test::decode_png(monitor::plot::encode_png(img));
    EXPECT_EQ(back.width, w);
    EXPECT_EQ(back.height, h);
    EXPECT_TRUE(back.pixels == img.pixels) << "pixels differ";
  }
}

TEST(TrainPlotPng, FlatImagesCompressToAFewKilobytes) {
  RgbImage img{960, 640, std::vector<uint8_t>(960 * 640 * 3, 255)};
  for (int x = 100; x < 900; ++x)
    img.pixels[(300 * 960 + x) * 3] = 0;  // one cyan line
  const std::vector<uint8_t> png = monitor::plot::encode_png(img);
  EXPECT_LT(png.size(), 20000u);  // of 1.8 MB raw
  EXPECT_TRUE(test::decode_png(png).pixels == img.pixels);
}

TEST(TrainPlotPng, WritesTheFileAndRejectsBadImages) {
  const RgbImage img = test_image(20, 10);
  const std::filesystem::path path = std::filesystem::temp_directory_path() /
                                     ("zt_test_png_" + std::to_string(::getpid()) + ".png");
  monitor::plot::write_png(path, img);
  std::ifstream in(path, std::ios::binary);
  const std::vector<uint8_t> bytes{std::istreambuf_iterator<char>(in), {}};
  EXPECT_EQ(bytes, monitor::plot::encode_png(img));
  std::filesystem::remove(path);
  EXPECT_THROW(monitor::plot::encode_png(RgbImage{0, 5, {}}), ValueError);
  EXPECT_THROW(monitor::plot::encode_png(RgbImage{2, 2, std::vector<uint8_t>(11)}), ValueError);
  EXPECT_THROW(monitor::plot::write_png(path / "not_a_dir" / "x.png", img), Error);
}

}  // namespace
}  // namespace zt
