// CRC-32C and IEEE CRC-32 over 256-entry tables built at compile time; see crc32.h. Tested by
// tests/monitor/test_tfevents.cpp.
#include "zerotrain/monitor/crc32.h"

#include <array>

namespace zt::monitor {

namespace {

constexpr uint32_t kCastagnoli = 0x82F63B78u;  // 0x1EDC6F41 bit-reversed
constexpr uint32_t kIeee = 0xEDB88320u;        // 0x04C11DB7 bit-reversed

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
constexpr std::array<uint32_t, 256> kIeeeTable = make_table(kIeee);

uint32_t reflected_crc(const std::array<uint32_t, 256>& table, std::string_view data,
                       uint32_t crc) {
  uint32_t c = ~crc;
  for (const char ch : data)
    c = table[(c ^ static_cast<uint8_t>(ch)) & 0xFFu] ^ (c >> 8);
  return ~c;
}

}  // namespace

uint32_t crc32c(std::string_view data, uint32_t crc) {
  return reflected_crc(kCastagnoliTable, data, crc);
}

uint32_t mask_crc32c(uint32_t crc) {
  return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}

uint32_t crc32_ieee(std::string_view data, uint32_t crc) {
  return reflected_crc(kIeeeTable, data, crc);
}

}  // namespace zt::monitor
