// A small reader of wandb transaction logs (run-<id>.wandb) for the tests: checks the file header,
// walks the 32 KiB blocks, checks each chunk's CRC-32 and joins FIRST/MIDDLE/LAST chunks, then
// splits each wandb_internal.Record into its top-level fields. Written from the format
// description ([Note: wandb datastore] in src/zerotrain/monitor/wandb_datastore.h), independent of
// the writer. Used by tests/monitor/test_wandb_offline.cpp.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "io/io_test_util.h"
#include "monitor/tfevents_reader.h"
#include "zerotrain/monitor/crc32.h"

namespace zt::test {

// The payloads of a .wandb file in order.
inline std::vector<std::string> read_wandb_payloads(const std::filesystem::path& path) {
  const std::string data = read_bytes(path);
  if (data.size() < 7 || data.substr(0, 4) != ":W&B" ||
      data.substr(4, 3) != std::string("\xE1\xBE\0", 3))
    throw std::runtime_error("bad file header");
  std::vector<std::string> out;
  std::string pending;
  bool in_record = false;
  size_t pos = 7;
  while (pos < data.size()) {
    const size_t left = 32768 - pos % 32768;
    if (left < 7) {
      if (data.substr(pos, left) != std::string(left, '\0'))
        throw std::runtime_error("bad padding");
      pos += left;
      continue;
    }
    if (data.size() - pos < 7) throw std::runtime_error("truncated chunk header");
    auto u8 = [&](size_t at) { return static_cast<uint32_t>(static_cast<uint8_t>(data[at])); };
    const uint32_t crc = u8(pos) | u8(pos + 1) << 8 | u8(pos + 2) << 16 | u8(pos + 3) << 24;
    const size_t length = u8(pos + 4) | u8(pos + 5) << 8;
    const uint8_t type = static_cast<uint8_t>(u8(pos + 6));
    if (length > left - 7 || data.size() - pos - 7 < length) throw std::runtime_error("bad length");
    const std::string chunk = data.substr(pos + 7, length);
    if (crc !=
        monitor::crc32_ieee(chunk, monitor::crc32_ieee(std::string(1, static_cast<char>(type)))))
      throw std::runtime_error("bad chunk CRC");
    pos += 7 + length;
    if (type == 1 && !in_record) {
      out.push_back(chunk);
    } else if (type == 2 && !in_record) {
      pending = chunk;
      in_record = true;
    } else if ((type == 3 || type == 4) && in_record) {
      pending += chunk;
      if (type == 4) {
        out.push_back(pending);
        in_record = false;
      }
    } else {
      throw std::runtime_error("unexpected chunk type " + std::to_string(type));
    }
  }
  if (in_record) throw std::runtime_error("unfinished record");
  return out;
}

// The top-level fields of a protobuf message: field number -> the raw values, in order
// (varints as decimal strings, length-delimited fields as their bytes).
inline std::map<int, std::vector<std::string>> proto_fields(std::string_view msg) {
  WireReader r(msg);
  std::map<int, std::vector<std::string>> out;
  while (!r.done()) {
    const uint64_t key = r.varint();
    const int field = static_cast<int>(key >> 3);
    switch (key & 7) {
      case 0:
        out[field].push_back(std::to_string(r.varint()));
        break;
      case 1:
        out[field].push_back(std::to_string(r.fixed(8)));
        break;
      case 2:
        out[field].emplace_back(r.bytes());
        break;
      case 5:
        out[field].push_back(std::to_string(r.fixed(4)));
        break;
      default:
        throw std::runtime_error("unexpected wire type");
    }
  }
  return out;
}

// {key: value_json} of the items (field 1) of a HistoryRecord / SummaryRecord / ConfigRecord.
inline std::map<std::string, std::string> proto_items(std::string_view msg) {
  std::map<std::string, std::string> out;
  auto fields = proto_fields(msg);
  for (const std::string& i : fields[1]) {
    auto f = proto_fields(i);
    out[f[1].at(0)] = f[16].at(0);
  }
  return out;
}

}  // namespace zt::test
