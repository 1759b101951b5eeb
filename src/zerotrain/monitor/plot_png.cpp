// PNG encoding: filters, zlib compression, chunks; see plot_png.h.
// Tested by tests/monitor/test_plot_png.cpp.
#include "zerotrain/monitor/plot_png.h"

#include <cstdlib>
#include <fstream>
#include <string_view>

#include <zlib.h>

#include "zerotrain/core/error.h"

namespace zt::monitor::plot {

namespace {

constexpr std::string_view kComponent = "plot";

int paeth(int a, int b, int c) {
  const int p = a + b - c;
  const int pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
  if (pa <= pb && pa <= pc) return a;
  return pb <= pc ? b : c;
}

// Each row prefixed by the filter (None, Sub, Up, Average, Paeth) with the smallest sum of
// |residual| as signed bytes, the usual heuristic.
std::vector<uint8_t> filter_rows(const RgbImage& img) {
  const size_t stride = static_cast<size_t>(img.width) * 3;
  std::vector<uint8_t> out;
  out.reserve((stride + 1) * static_cast<size_t>(img.height));
  std::vector<uint8_t> zero(stride, 0), trial(stride), best(stride);
  for (int y = 0; y < img.height; ++y) {
    const uint8_t* row = img.pixels.data() + static_cast<size_t>(y) * stride;
    const uint8_t* up = y > 0 ? row - stride : zero.data();
    long best_cost = -1;
    uint8_t best_type = 0;
    for (uint8_t type = 0; type < 5; ++type) {
      long cost = 0;
      for (size_t x = 0; x < stride; ++x) {
        const int a = x >= 3 ? row[x - 3] : 0, b = up[x], c = x >= 3 ? up[x - 3] : 0;
        int pred = 0;
        switch (type) {
          case 1:
            pred = a;
            break;
          case 2:
            pred = b;
            break;
          case 3:
            pred = (a + b) / 2;
            break;
          case 4:
            pred = paeth(a, b, c);
            break;
          default:
            break;
        }
        trial[x] = static_cast<uint8_t>(row[x] - pred);
        cost += std::abs(static_cast<int8_t>(trial[x]));
      }
      if (best_cost < 0 || cost < best_cost) {
        best_cost = cost;
        best_type = type;
        best.swap(trial);
      }
    }
    out.push_back(best_type);
    out.insert(out.end(), best.begin(), best.end());
  }
  return out;
}

void put_u32(std::vector<uint8_t>& out, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8)
    out.push_back(static_cast<uint8_t>(v >> shift));
}

void put_chunk(std::vector<uint8_t>& out, const char type[4], const std::vector<uint8_t>& data) {
  put_u32(out, static_cast<uint32_t>(data.size()));
  const size_t start = out.size();
  out.insert(out.end(), type, type + 4);
  out.insert(out.end(), data.begin(), data.end());
  put_u32(out, static_cast<uint32_t>(
                   ::crc32(0L, out.data() + start, static_cast<uInt>(out.size() - start))));
}

}  // namespace

std::vector<uint8_t> zlib_compress(const std::vector<uint8_t>& data) {
  uLongf size = compressBound(static_cast<uLong>(data.size()));
  std::vector<uint8_t> out(size);
  const int rc = compress2(out.data(), &size, data.data(), static_cast<uLong>(data.size()),
                           Z_BEST_COMPRESSION);
  if (rc != Z_OK) throw Error(kComponent, str("zlib compress2 failed with code ", rc));
  out.resize(size);
  return out;
}

std::vector<uint8_t> encode_png(const RgbImage& image) {
  if (image.width <= 0 || image.height <= 0)
    throw ValueError(kComponent,
                     str("image size ", image.width, "x", image.height, ": must be positive"));
  const size_t expected = static_cast<size_t>(image.width) * static_cast<size_t>(image.height) * 3;
  if (image.pixels.size() != expected)
    throw ValueError(kComponent, str("pixels: ", image.pixels.size(), " bytes for a ", image.width,
                                     "x", image.height, " RGB image, expected ", expected));
  std::vector<uint8_t> png = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
  std::vector<uint8_t> ihdr;
  put_u32(ihdr, static_cast<uint32_t>(image.width));
  put_u32(ihdr, static_cast<uint32_t>(image.height));
  ihdr.insert(ihdr.end(),
              {8, 2, 0, 0, 0});  // 8 bits, truecolor RGB, deflate, adaptive, no interlace
  put_chunk(png, "IHDR", ihdr);
  put_chunk(png, "IDAT", zlib_compress(filter_rows(image)));
  put_chunk(png, "IEND", {});
  return png;
}

void write_png(const std::filesystem::path& path, const RgbImage& image) {
  const std::vector<uint8_t> bytes = encode_png(image);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw Error(kComponent, str(path.string(), ": cannot open for writing"));
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
  if (!out) throw Error(kComponent, str(path.string(), ": write failed"));
}

}  // namespace zt::monitor::plot
