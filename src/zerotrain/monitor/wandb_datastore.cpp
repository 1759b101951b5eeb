// wandb's transaction-log framing; see wandb_datastore.h. Tested by
// tests/monitor/test_wandb_offline.cpp.
#include "zerotrain/monitor/wandb_datastore.h"

#include <algorithm>

#include "zerotrain/core/error.h"
#include "zerotrain/monitor/crc32.h"
#include "zerotrain/monitor/proto_wire.h"

namespace zt::monitor {

namespace {

constexpr std::string_view kComponent = "wandb";
constexpr uint8_t kFull = 1, kFirst = 2, kMiddle = 3, kLast = 4;

}  // namespace

WandbDataStore::WandbDataStore(const std::filesystem::path& path) : path_(path) {
  if (std::filesystem::exists(path_))
    throw Error(kComponent, str(path_.string(), ": already exists"));
  out_.open(path_, std::ios::binary | std::ios::trunc);
  if (!out_) throw Error(kComponent, str(path_.string(), ": cannot open for writing"));
  out_ << ":W&B" << proto::little_endian(0xBEE1, 2) << '\0';
  offset_ = kHeaderBytes;
  out_.flush();
  if (!out_) throw Error(kComponent, str(path_.string(), ": write failed"));
}

void WandbDataStore::write_chunk(std::string_view data, uint8_t type) {
  const std::string type_byte(1, static_cast<char>(type));
  const uint32_t checksum = crc32_ieee(data, crc32_ieee(type_byte));
  out_ << proto::little_endian(checksum, 4) << proto::little_endian(data.size(), 2) << type_byte
       << data;
  offset_ += kHeaderBytes + static_cast<int64_t>(data.size());
}

void WandbDataStore::write(std::string_view payload) {
  bool first = true;
  while (true) {
    int64_t left_in_block = kBlockBytes - offset_ % kBlockBytes;
    if (left_in_block < kHeaderBytes) {
      out_ << std::string(static_cast<size_t>(left_in_block), '\0');
      offset_ += left_in_block;
      left_in_block = kBlockBytes;
    }
    const auto room = static_cast<size_t>(left_in_block - kHeaderBytes);
    const size_t n = std::min(room, payload.size());
    const bool last = n == payload.size();
    write_chunk(payload.substr(0, n), first ? (last ? kFull : kFirst) : (last ? kLast : kMiddle));
    payload.remove_prefix(n);
    first = false;
    if (last) break;
  }
  out_.flush();
  if (!out_) throw Error(kComponent, str(path_.string(), ": write failed"));
}

}  // namespace zt::monitor
