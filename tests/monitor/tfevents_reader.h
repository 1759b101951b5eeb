// A small reader of TensorBoard event files for the tests: splits the TFRecord framing, checks
// both masked CRC-32Cs of every record and decodes the Event fields zerotrain writes
// ([Note: tfevents format] in src/zerotrain/monitor/tfevents_writer.h). Independent of the writer's
// encoder: it parses the protobuf wire format field by field. Used by
// tests/monitor/test_tfevents.cpp.
#pragma once

#include <bit>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "io/io_test_util.h"
#include "zerotrain/monitor/crc32.h"

namespace zt::test {

struct DecodedEvent {
  double wall_time = 0;
  int64_t step = 0;
  std::string file_version;
  std::optional<int> session_status;
  std::vector<std::pair<std::string, float>> scalars;  // summary values (tag, simple_value)
};

class WireReader {
 public:
  explicit WireReader(std::string_view data) : data_(data) {}
  bool done() const { return pos_ == data_.size(); }
  uint64_t varint() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      const uint8_t b = byte();
      v |= static_cast<uint64_t>(b & 0x7Fu) << shift;
      if (!(b & 0x80u)) return v;
    }
    throw std::runtime_error("varint too long");
  }
  uint64_t fixed(int n) {
    uint64_t v = 0;
    for (int i = 0; i < n; ++i)
      v |= static_cast<uint64_t>(byte()) << (8 * i);
    return v;
  }
  std::string_view bytes() {
    const uint64_t n = varint();
    if (n > data_.size() - pos_) throw std::runtime_error("length past the end");
    const std::string_view out = data_.substr(pos_, n);
    pos_ += n;
    return out;
  }

 private:
  uint8_t byte() {
    if (pos_ >= data_.size()) throw std::runtime_error("truncated message");
    return static_cast<uint8_t>(data_[pos_++]);
  }
  std::string_view data_;
  size_t pos_ = 0;
};

inline std::pair<std::string, float> decode_summary_value(std::string_view msg) {
  WireReader r(msg);
  std::pair<std::string, float> out;
  while (!r.done()) {
    const uint64_t key = r.varint();
    if (key == (1u << 3 | 2))
      out.first = std::string(r.bytes());
    else if (key == (2u << 3 | 5))
      out.second = std::bit_cast<float>(static_cast<uint32_t>(r.fixed(4)));
    else
      throw std::runtime_error("unexpected Summary.Value key " + std::to_string(key));
  }
  return out;
}

inline DecodedEvent decode_event(std::string_view msg) {
  WireReader r(msg);
  DecodedEvent e;
  while (!r.done()) {
    const uint64_t key = r.varint();
    if (key == (1u << 3 | 1)) {
      e.wall_time = std::bit_cast<double>(r.fixed(8));
    } else if (key == (2u << 3 | 0)) {
      e.step = static_cast<int64_t>(r.varint());
    } else if (key == (3u << 3 | 2)) {
      e.file_version = std::string(r.bytes());
    } else if (key == (5u << 3 | 2)) {
      WireReader s(r.bytes());
      while (!s.done()) {
        if (s.varint() != (1u << 3 | 2)) throw std::runtime_error("unexpected Summary key");
        e.scalars.push_back(decode_summary_value(s.bytes()));
      }
    } else if (key == (6u << 3 | 2)) {
      WireReader s(r.bytes());
      if (s.varint() != (1u << 3 | 0)) throw std::runtime_error("unexpected SessionLog key");
      e.session_status = static_cast<int>(s.varint());
    } else {
      throw std::runtime_error("unexpected Event key " + std::to_string(key));
    }
  }
  return e;
}

// Every record of an event file; throws std::runtime_error on a bad CRC or a truncated record.
inline std::vector<DecodedEvent> read_tfevents(const std::filesystem::path& path) {
  const std::string data = read_bytes(path);
  std::vector<DecodedEvent> out;
  size_t pos = 0;
  auto le = [&](size_t at, int n) {
    uint64_t v = 0;
    for (int i = 0; i < n; ++i)
      v |= static_cast<uint64_t>(static_cast<uint8_t>(data[at + static_cast<size_t>(i)]))
           << (8 * i);
    return v;
  };
  while (pos < data.size()) {
    if (data.size() - pos < 12) throw std::runtime_error("truncated record header");
    const uint64_t length = le(pos, 8);
    if (le(pos + 8, 4) !=
        monitor::mask_crc32c(monitor::crc32c(std::string_view(data).substr(pos, 8))))
      throw std::runtime_error("bad length CRC");
    pos += 12;
    if (data.size() - pos < length + 4) throw std::runtime_error("truncated record");
    const std::string_view payload = std::string_view(data).substr(pos, length);
    if (le(pos + length, 4) != monitor::mask_crc32c(monitor::crc32c(payload)))
      throw std::runtime_error("bad payload CRC");
    out.push_back(decode_event(payload));
    pos += length + 4;
  }
  return out;
}

}  // namespace zt::test
