// The two CRC-32 checksums of the monitor files: CRC-32C (Castagnoli, reflected polynomial
// 0x82F63B78, as iSCSI / RFC 3720) with the masked form TFRecord files store (see [Note: masked
// CRC]), and the IEEE CRC-32 (zlib's crc32, reflected 0xEDB88320) that wandb's .wandb log uses.
// Tested by tests/monitor/test_tfevents.cpp and tests/monitor/test_wandb_offline.cpp.
//
// [Note: masked CRC]
// TFRecord (TensorFlow's tensorflow/core/lib/hash/crc32c.h) stores rotr(crc, 15) + 0xa282ead8
// instead of the CRC itself, so that a CRC of data that embeds CRCs is not trivially related to
// them. Readers (tensorboard's event_file_loader) check the masked value.
#pragma once

#include <cstdint>
#include <string_view>

namespace zt::monitor {

// CRC-32C of `data`, continuing from a previous result `crc` (0 to start).
uint32_t crc32c(std::string_view data, uint32_t crc = 0);

// [Note: masked CRC] of `crc`.
uint32_t mask_crc32c(uint32_t crc);

// zlib's crc32(data, crc): the IEEE CRC-32, continuing from `crc` (0 to start).
uint32_t crc32_ieee(std::string_view data, uint32_t crc = 0);

}  // namespace zt::monitor
