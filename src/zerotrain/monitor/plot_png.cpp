// PNG encoding: filters, deflate with fixed Huffman codes, chunks; see plot_png.h.
// Tested by tests/monitor/test_plot_png.cpp.
#include "zerotrain/monitor/plot_png.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <fstream>
#include <string_view>

#include "zerotrain/core/error.h"

namespace zt::monitor::plot {

namespace {

constexpr std::string_view kComponent = "plot";

// Deflate's length codes 257..285 and distance codes 0..29: base values and extra bits.
constexpr std::array<int, 29> kLengthBase = {3,  4,  5,  6,   7,   8,   9,   10,  11, 13,
                                             15, 17, 19, 23,  27,  31,  35,  43,  51, 59,
                                             67, 83, 99, 115, 131, 163, 195, 227, 258};
constexpr std::array<int, 29> kLengthExtra = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
                                              2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
constexpr std::array<int, 30> kDistBase = {
    1,   2,   3,   4,   5,   7,    9,    13,   17,   25,   33,   49,   65,    97,    129,
    193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577};
constexpr std::array<int, 30> kDistExtra = {0, 0, 0, 0, 1, 1, 2, 2,  3,  3,  4,  4,  5,  5,  6,
                                            6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13};

constexpr int kMinMatch = 3;
constexpr int kMaxMatch = 258;
constexpr int kWindow = 32768;
constexpr int kHashBits = 15;
constexpr int kMaxChain = 64;  // candidates tried per position: plenty for plots, bounded time

// Deflate's bit order: values go in least-significant bit first, Huffman codes most-significant
// bit first (so they are reversed before going in).
class BitWriter {
 public:
  explicit BitWriter(std::vector<uint8_t>& out) : out_(out) {}
  void put(uint32_t bits, int count) {
    acc_ |= bits << n_;
    n_ += count;
    while (n_ >= 8) {
      out_.push_back(static_cast<uint8_t>(acc_ & 0xff));
      acc_ >>= 8;
      n_ -= 8;
    }
  }
  void put_code(uint32_t code, int len) {
    uint32_t r = 0;
    for (int i = 0; i < len; ++i)
      r |= ((code >> i) & 1u) << (len - 1 - i);
    put(r, len);
  }
  void flush() {
    if (n_ > 0) out_.push_back(static_cast<uint8_t>(acc_ & 0xff));
    acc_ = 0;
    n_ = 0;
  }

 private:
  std::vector<uint8_t>& out_;
  uint32_t acc_ = 0;
  int n_ = 0;
};

// The fixed literal/length code of RFC 1951 section 3.2.6.
void put_symbol(BitWriter& w, int sym) {
  if (sym < 144)
    w.put_code(0x30 + sym, 8);
  else if (sym < 256)
    w.put_code(0x190 + sym - 144, 9);
  else if (sym < 280)
    w.put_code(sym - 256, 7);
  else
    w.put_code(0xC0 + sym - 280, 8);
}

void put_match(BitWriter& w, int length, int distance) {
  int li = static_cast<int>(kLengthBase.size()) - 1;
  while (kLengthBase[li] > length)
    --li;
  put_symbol(w, 257 + li);
  w.put(static_cast<uint32_t>(length - kLengthBase[li]), kLengthExtra[li]);
  int di = static_cast<int>(kDistBase.size()) - 1;
  while (kDistBase[di] > distance)
    --di;
  w.put_code(static_cast<uint32_t>(di), 5);
  w.put(static_cast<uint32_t>(distance - kDistBase[di]), kDistExtra[di]);
}

// Greedy LZ77 over hash chains of 3-byte prefixes, emitted as fixed-Huffman symbols.
void deflate_fixed(const std::vector<uint8_t>& data, BitWriter& w) {
  const int n = static_cast<int>(data.size());
  std::vector<int> head(1 << kHashBits, -1);
  std::vector<int> prev(kWindow, -1);  // prev[p % kWindow]: the previous position with p's hash
  auto hash = [&](int p) {
    const uint32_t v = data[p] | (data[p + 1] << 8) | (data[p + 2] << 16);
    return static_cast<int>((v * 2654435761u) >> (32 - kHashBits));
  };
  auto insert = [&](int p) {
    if (p + kMinMatch > n) return;
    const int h = hash(p);
    prev[p % kWindow] = head[h];
    head[h] = p;
  };
  w.put(1, 1);  // BFINAL: the only block
  w.put(1, 2);  // BTYPE 01: fixed Huffman codes
  int i = 0;
  while (i < n) {
    int best_len = 0, best_dist = 0;
    if (i + kMinMatch <= n) {
      const int limit = std::min(kMaxMatch, n - i);
      int cand = head[hash(i)];
      for (int chain = 0; cand >= 0 && i - cand <= kWindow && chain < kMaxChain; ++chain) {
        int len = 0;
        while (len < limit && data[cand + len] == data[i + len])
          ++len;
        if (len > best_len) {
          best_len = len;
          best_dist = i - cand;
          if (len == limit) break;
        }
        cand = prev[cand % kWindow];
      }
    }
    if (best_len >= kMinMatch) {
      put_match(w, best_len, best_dist);
      for (int k = 0; k < best_len; ++k)
        insert(i + k);
      i += best_len;
    } else {
      put_symbol(w, data[i]);
      insert(i);
      ++i;
    }
  }
  put_symbol(w, 256);  // end of block
  w.flush();
}

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
  put_u32(out, crc32(out.data() + start, out.size() - start));
}

}  // namespace

uint32_t crc32(const uint8_t* data, size_t n) {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k)
        c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  uint32_t c = 0xFFFFFFFFu;
  for (size_t i = 0; i < n; ++i)
    c = table[(c ^ data[i]) & 0xff] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

uint32_t adler32(const uint8_t* data, size_t n) {
  constexpr uint32_t kMod = 65521;
  uint32_t a = 1, b = 0;
  for (size_t i = 0; i < n; ++i) {
    a = (a + data[i]) % kMod;
    b = (b + a) % kMod;
  }
  return (b << 16) | a;
}

std::vector<uint8_t> zlib_compress(const std::vector<uint8_t>& data) {
  std::vector<uint8_t> out = {0x78, 0x01};  // deflate, 32 KiB window; check bits make it % 31 == 0
  BitWriter w(out);
  deflate_fixed(data, w);
  put_u32(out, adler32(data.data(), data.size()));
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
