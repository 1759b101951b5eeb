// The protocol-buffers wire format, written by hand for the few messages zerotrain emits
// (TensorBoard's Event protos, tfevents_writer.h): varints, 64/32-bit little-endian fixed fields
// and length-delimited fields (strings, nested messages). Tested by
// tests/monitor/test_tfevents.cpp.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace zt::monitor::proto {

// Appends fields to a message buffer; a nested message is a finished buffer passed to bytes().
class Writer {
 public:
  void varint(int field, uint64_t value);         // wire type 0 (int32/int64/enum/bool)
  void fixed64(int field, uint64_t bits);         // wire type 1
  void double_value(int field, double value);     // wire type 1
  void fixed32(int field, uint32_t bits);         // wire type 5
  void float_value(int field, float value);       // wire type 5
  void bytes(int field, std::string_view value);  // wire type 2 (string, bytes, message)

  const std::string& data() const { return out_; }

 private:
  void key(int field, int wire_type);
  void raw_varint(uint64_t value);
  void raw_le(uint64_t bits, int n);

  std::string out_;
};

// `value` as little-endian bytes (n of them), the framing of TFRecord lengths and CRCs.
std::string little_endian(uint64_t value, int n);

}  // namespace zt::monitor::proto
