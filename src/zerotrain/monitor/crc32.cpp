// CRC-32C over a 256-entry table built at compile time, and the IEEE CRC-32 from zlib; see
// crc32.h. Tested by tests/monitor/test_tfevents.cpp.
#include "zerotrain/monitor/crc32.h"

#include <array>

#include <zlib.h>

namespace zt::monitor {

namespace {

// Hand-written because zlib has no CRC-32C (Castagnoli); the IEEE CRC-32 below is zlib's.
constexpr uint32_t kCastagnoli = 0x82F63B78u;  // 0x1EDC6F41 bit-reversed

constexpr std::array<uint32_t, 256> make_table(uint32_t polynomial) {
  std::array<uint32_t, 256> t{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int bit = 0; bit < 8; ++bit)
      c = (c & 1u) ? (c >> 1) ^ polynomial : c >> 1;
    t[i] = c;
  }
  return t;
}

constexpr std::array<uint32_t, 256> kCastagnoliTable = make_table(kCastagnoli);

}  // namespace

uint32_t crc32c(std::string_view data, uint32_t crc) {
  uint32_t c = ~crc;
  for (const char ch : data)
    c = kCastagnoliTable[(c ^ static_cast<uint8_t>(ch)) & 0xFFu] ^ (c >> 8);
  return ~c;
}

uint32_t mask_crc32c(uint32_t crc) {
  return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}

uint32_t crc32_ieee(std::string_view data, uint32_t crc) {
  return static_cast<uint32_t>(
      ::crc32(crc, reinterpret_cast<const Bytef*>(data.data()), static_cast<uInt>(data.size())));
}

}  // namespace zt::monitor
