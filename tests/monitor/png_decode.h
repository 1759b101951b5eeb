// A PNG reader for the plot tests, written from the PNG and deflate specifications (RFC 2083,
// 1950, 1951) independently of the writer: checks the signature, every chunk's CRC, the IHDR
// fields and the zlib header and Adler-32, inflates stored and fixed-Huffman blocks (all the writer
// emits; dynamic blocks are refused), and undoes the five row filters. Failures are gtest failures.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "zerotrain/monitor/plot_png.h"

namespace zt::test {

class InflateError : public std::runtime_error {
  using std::runtime_error::runtime_error;
};

inline uint32_t read_be32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3];
}

class BitReader {
 public:
  BitReader(const std::vector<uint8_t>& d, size_t pos) : d_(d), pos_(pos) {}
  uint32_t bit() {
    if (pos_ >= d_.size()) throw InflateError("read past the end of the stream");
    const uint32_t b = (d_[pos_] >> nbit_) & 1u;
    if (++nbit_ == 8) {
      nbit_ = 0;
      ++pos_;
    }
    return b;
  }
  uint32_t bits(int n) {  // an n-bit value, least-significant bit first
    uint32_t v = 0;
    for (int i = 0; i < n; ++i)
      v |= bit() << i;
    return v;
  }
  void align() {
    if (nbit_ != 0) {
      nbit_ = 0;
      ++pos_;
    }
  }
  size_t pos() const { return pos_; }
  void seek(size_t pos) {
    pos_ = pos;
    nbit_ = 0;
  }

 private:
  const std::vector<uint8_t>& d_;
  size_t pos_;
  int nbit_ = 0;
};

// One symbol of the fixed literal/length code: Huffman codes arrive most-significant bit first.
inline int fixed_literal(BitReader& r) {
  uint32_t code = 0;
  for (int len = 1; len <= 9; ++len) {
    code = (code << 1) | r.bit();
    if (len == 7 && code <= 23) return 256 + static_cast<int>(code);
    if (len == 8 && code >= 0x30 && code <= 0xBF) return static_cast<int>(code - 0x30);
    if (len == 8 && code >= 0xC0 && code <= 0xC7) return 280 + static_cast<int>(code - 0xC0);
    if (len == 9 && code >= 0x190) return 144 + static_cast<int>(code - 0x190);
  }
  throw InflateError("bad fixed literal/length code");
}

// Inflates a zlib stream; throws InflateError on anything malformed.
inline std::vector<uint8_t> zlib_inflate(const std::vector<uint8_t>& z) {
  static const int kLenBase[] = {3,  4,  5,  6,  7,  8,  9,  10, 11,  13,  15,  17,  19,  23, 27,
                                 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258};
  static const int kLenExtra[] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
                                  2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
  static const int kDistBase[] = {1,    2,    3,    4,    5,    7,    9,    13,    17,    25,
                                  33,   49,   65,   97,   129,  193,  257,  385,   513,   769,
                                  1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577};
  static const int kDistExtra[] = {0, 0, 0, 0, 1, 1, 2, 2,  3,  3,  4,  4,  5,  5,  6,
                                   6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13};
  if (z.size() < 6) throw InflateError("zlib stream too short");
  if ((z[0] & 0x0F) != 8) throw InflateError("zlib method is not deflate");
  if (((z[0] << 8) | z[1]) % 31 != 0) throw InflateError("zlib header check bits wrong");
  if (z[1] & 0x20) throw InflateError("zlib preset dictionary");
  std::vector<uint8_t> out;
  BitReader r(z, 2);
  for (bool last = false; !last;) {
    last = r.bit() != 0;
    const uint32_t type = r.bits(2);
    if (type == 0) {
      r.align();
      const size_t p = r.pos();
      if (p + 4 > z.size()) throw InflateError("stored block header past the end");
      const uint32_t len = z[p] | (z[p + 1] << 8), nlen = z[p + 2] | (z[p + 3] << 8);
      if ((len ^ 0xFFFFu) != nlen) throw InflateError("stored block length check failed");
      if (p + 4 + len > z.size()) throw InflateError("stored block past the end");
      out.insert(out.end(), z.begin() + static_cast<long>(p + 4),
                 z.begin() + static_cast<long>(p + 4 + len));
      r.seek(p + 4 + len);
      continue;
    }
    if (type != 1) throw InflateError("block type " + std::to_string(type) + " not supported");
    for (;;) {
      const int sym = fixed_literal(r);
      if (sym < 256) {
        out.push_back(static_cast<uint8_t>(sym));
        continue;
      }
      if (sym == 256) break;
      if (sym > 285) throw InflateError("length symbol out of range");
      const int li = sym - 257;
      const int length = kLenBase[li] + static_cast<int>(r.bits(kLenExtra[li]));
      uint32_t dcode = 0;
      for (int i = 0; i < 5; ++i)
        dcode = (dcode << 1) | r.bit();
      if (dcode > 29) throw InflateError("distance code out of range");
      const int dist = kDistBase[dcode] + static_cast<int>(r.bits(kDistExtra[dcode]));
      if (dist > static_cast<int>(out.size())) throw InflateError("distance before the start");
      for (int i = 0; i < length; ++i)
        out.push_back(out[out.size() - static_cast<size_t>(dist)]);
    }
  }
  r.align();
  if (r.pos() + 4 != z.size()) throw InflateError("trailing bytes after the deflate stream");
  if (read_be32(z.data() + r.pos()) != monitor::plot::adler32(out.data(), out.size()))
    throw InflateError("Adler-32 mismatch");
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
    EXPECT_EQ(read_be32(data + len), monitor::plot::crc32(&png[p + 4], len + 4)) << type << " CRC";
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
