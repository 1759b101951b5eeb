// The protocol-buffers wire format; see proto_wire.h. Tested by tests/monitor/test_tfevents.cpp.
#include "zerotrain/monitor/proto_wire.h"

#include <bit>

namespace zt::monitor::proto {

std::string little_endian(uint64_t value, int n) {
  std::string out(static_cast<size_t>(n), '\0');
  for (int i = 0; i < n; ++i)
    out[static_cast<size_t>(i)] = static_cast<char>((value >> (8 * i)) & 0xFFu);
  return out;
}

void Writer::key(int field, int wire_type) {
  raw_varint((static_cast<uint64_t>(field) << 3) | static_cast<uint64_t>(wire_type));
}

void Writer::raw_varint(uint64_t value) {
  while (value >= 0x80) {
    out_ += static_cast<char>((value & 0x7Fu) | 0x80u);
    value >>= 7;
  }
  out_ += static_cast<char>(value);
}

void Writer::raw_le(uint64_t bits, int n) {
  out_ += little_endian(bits, n);
}

void Writer::varint(int field, uint64_t value) {
  key(field, 0);
  raw_varint(value);
}

void Writer::fixed64(int field, uint64_t bits) {
  key(field, 1);
  raw_le(bits, 8);
}

void Writer::double_value(int field, double value) {
  fixed64(field, std::bit_cast<uint64_t>(value));
}

void Writer::fixed32(int field, uint32_t bits) {
  key(field, 5);
  raw_le(bits, 4);
}

void Writer::float_value(int field, float value) {
  fixed32(field, std::bit_cast<uint32_t>(value));
}

void Writer::bytes(int field, std::string_view value) {
  key(field, 2);
  raw_varint(value.size());
  out_.append(value);
}

}  // namespace zt::monitor::proto
