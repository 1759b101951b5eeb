// TensorBoard event files; see tfevents_writer.h. Tested by tests/monitor/test_tfevents.cpp.
#include "zerotrain/monitor/tfevents_writer.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>

#include "zerotrain/core/error.h"
#include "zerotrain/core/process_info.h"
#include "zerotrain/monitor/crc32.h"
#include "zerotrain/monitor/proto_wire.h"

namespace zt::monitor {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view kComponent = "tensorboard";

// tensorflow.Event field numbers ([Note: tfevents format]).
constexpr int kWallTime = 1, kStep = 2, kFileVersion = 3, kSummary = 5, kSessionLog = 6;
constexpr int kSummaryValue = 1, kValueTag = 1, kValueSimple = 2;
constexpr int kSessionStatus = 1, kSessionStart = 1;

std::atomic<int> g_writers{0};

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

fs::path event_file_name(double wall_time) {
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%010lld", static_cast<long long>(wall_time));
  return str("events.out.tfevents.", seconds, ".", host_name(), ".", ::getpid(), ".",
             g_writers.fetch_add(1));
}

// An Event with wall_time and step set (step 0 is proto3's default and left out).
proto::Writer event_head(double wall_time, int64_t step) {
  proto::Writer e;
  e.double_value(kWallTime, wall_time);
  if (step != 0) e.varint(kStep, static_cast<uint64_t>(step));
  return e;
}

}  // namespace

std::string tfrecord(std::string_view payload) {
  const std::string length = proto::little_endian(payload.size(), 8);
  return length + proto::little_endian(mask_crc32c(crc32c(length)), 4) + std::string(payload) +
         proto::little_endian(mask_crc32c(crc32c(payload)), 4);
}

TfEventsWriter::TfEventsWriter(const fs::path& dir, std::optional<int64_t> purge_step) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec)
    throw Error(kComponent, str(dir.string(), ": cannot create the directory: ", ec.message()));
  const double t = now_seconds();
  path_ = dir / event_file_name(t);
  out_.open(path_, std::ios::binary | std::ios::trunc);
  if (!out_) throw Error(kComponent, str(path_.string(), ": cannot open for writing"));
  proto::Writer first = event_head(t, purge_step.value_or(0));
  first.bytes(kFileVersion, "brain.Event:2");
  write_record(first.data());
  if (purge_step) {
    proto::Writer session;
    session.varint(kSessionStatus, kSessionStart);
    proto::Writer e = event_head(t, *purge_step);
    e.bytes(kSessionLog, session.data());
    write_record(e.data());
  }
}

void TfEventsWriter::add_scalar(std::string_view tag, double value, int64_t step) {
  proto::Writer v;
  v.bytes(kValueTag, tag);
  v.float_value(kValueSimple, static_cast<float>(value));
  proto::Writer summary;
  summary.bytes(kSummaryValue, v.data());
  proto::Writer e = event_head(now_seconds(), step);
  e.bytes(kSummary, summary.data());
  write_record(e.data());
}

void TfEventsWriter::write_record(const std::string& payload) {
  out_ << tfrecord(payload);
  out_.flush();
  if (!out_) throw Error(kComponent, str(path_.string(), ": write failed"));
}

}  // namespace zt::monitor
