// A PNG reader for the plot tests, written from the PNG specification (RFC 2083) independently of
// the writer: checks the signature, every chunk's CRC, the IHDR fields, inflates the image data
// with zlib's inflate (which checks the zlib header and Adler-32), and undoes the five row filters.
// Failures are gtest failures.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include <zlib.h>

#include "zerotrain/monitor/plot_png.h"

namespace zt::test {

class InflateError : public std::runtime_error {
  using std::runtime_error::runtime_error;
};

inline uint32_t read_be32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3];
}

// Inflates a zlib stream with zlib's own inflate (header, Adler-32 and all); throws InflateError
// on anything malformed or on bytes after the stream's end.
inline std::vector<uint8_t> zlib_inflate(const std::vector<uint8_t>& z) {
  z_stream zs{};
  if (inflateInit(&zs) != Z_OK) throw InflateError("inflateInit failed");
  zs.next_in = const_cast<Bytef*>(z.data());
  zs.avail_in = static_cast<uInt>(z.size());
  std::vector<uint8_t> out;
  uint8_t buf[16384];
  int rc = Z_OK;
  while (rc == Z_OK) {
    zs.next_out = buf;
    zs.avail_out = sizeof(buf);
    rc = inflate(&zs, Z_NO_FLUSH);
    out.insert(out.end(), buf, buf + (sizeof(buf) - zs.avail_out));
  }
  const uInt left = zs.avail_in;
  inflateEnd(&zs);
  if (rc != Z_STREAM_END) throw InflateError("inflate failed with code " + std::to_string(rc));
  if (left != 0) throw InflateError("trailing bytes after the zlib stream");
  return out;
}

// Decodes an 8-bit RGB PNG into its pixels; every check failure is reported through gtest.
inline monitor::plot::RgbImage decode_png(const std::vector<uint8_t>& png) {
  monitor::plot::RgbImage img;
  const uint8_t sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
  EXPECT_TRUE(png.size() > 8 && std::equal(sig, sig + 8, png.begin())) << "PNG signature";
  std::vector<uint8_t> idat;
  std::vector<std::string> order;
  for (size_t p = 8; p + 12 <= png.size();) {
    const uint32_t len = read_be32(&png[p]);
    if (p + 12 + len > png.size()) {
      ADD_FAILURE() << "chunk runs past the end";
      return img;
    }
    const std::string type(png.begin() + static_cast<long>(p) + 4,
                           png.begin() + static_cast<long>(p) + 8);
    const uint8_t* data = &png[p + 8];
    EXPECT_EQ(read_be32(data + len), ::crc32(0L, &png[p + 4], len + 4)) << type << " CRC";
    order.push_back(type);
    if (type == "IHDR") {
      EXPECT_EQ(len, 13u);
      img.width = static_cast<int>(read_be32(data));
      img.height = static_cast<int>(read_be32(data + 4));
      EXPECT_EQ(data[8], 8) << "bit depth";
      EXPECT_EQ(data[9], 2) << "colour type (RGB)";
      EXPECT_EQ(data[10], 0);
      EXPECT_EQ(data[11], 0);
      EXPECT_EQ(data[12], 0) << "interlace";
    } else if (type == "IDAT") {
      idat.insert(idat.end(), data, data + len);
    }
    p += 12 + len;
    if (type == "IEND") {
      EXPECT_EQ(p, png.size()) << "bytes after IEND";
    }
  }
  EXPECT_TRUE(order.size() >= 3 && order.front() == "IHDR" && order.back() == "IEND")
      << "chunk order";
  std::vector<uint8_t> raw;
  try {
    raw = zlib_inflate(idat);
  } catch (const InflateError& e) {
    ADD_FAILURE() << "inflate: " << e.what();
    return img;
  }
  const size_t stride = static_cast<size_t>(img.width) * 3;
  if (raw.size() != (stride + 1) * static_cast<size_t>(img.height)) {
    ADD_FAILURE() << "inflated " << raw.size() << " bytes for " << img.width << "x" << img.height;
    return img;
  }
  img.pixels.resize(stride * static_cast<size_t>(img.height));
  for (size_t y = 0; y < static_cast<size_t>(img.height); ++y) {
    const uint8_t filter = raw[y * (stride + 1)];
    const uint8_t* in = &raw[y * (stride + 1) + 1];
    uint8_t* row = &img.pixels[y * stride];
    const uint8_t* up = y > 0 ? row - stride : nullptr;
    for (size_t x = 0; x < stride; ++x) {
      const int a = x >= 3 ? row[x - 3] : 0, b = up ? up[x] : 0, c = (up && x >= 3) ? up[x - 3] : 0;
      int pred = 0;
      switch (filter) {
        case 0:
          break;
        case 1:
          pred = a;
          break;
        case 2:
          pred = b;
          break;
        case 3:
          pred = (a + b) / 2;
          break;
        case 4: {
          const int p = a + b - c, pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
          pred = (pa <= pb && pa <= pc) ? a : (pb <= pc ? b : c);
          break;
        }
        default:
          ADD_FAILURE() << "row " << y << ": filter " << int{filter};
          return img;
      }
      row[x] = static_cast<uint8_t>(in[x] + pred);
    }
  }
  return img;
}

}  // namespace zt::test
