// A TensorBoard event file (what torch.utils.tensorboard.SummaryWriter writes): TFRecord framing
// of Event protos, see [Note: tfevents format]. Each record is flushed as it is written, so a
// crash loses nothing already logged. Tested by tests/monitor/test_tfevents.cpp and, against
// tensorboard's own loader, tools/parity/check_tfevents.py.
//
// [Note: tfevents format]
// File name: events.out.tfevents.<unix seconds, 10 digits>.<hostname>.<pid>.<n> (n counts the
// writers of this process, as tensorboard's EventFileWriter does). Each record: u64 length (LE),
// masked CRC-32C of those 8 bytes, the payload, masked CRC-32C of the payload (crc32.h). The
// payload is a tensorflow.Event: wall_time (1, double seconds), step (2, int64), file_version
// (3, string; "brain.Event:2" in the first record), summary (5: Summary { value (1): { tag (1),
// simple_value (2, float) } }), session_log (6: SessionLog { status (1): START = 1 }). A writer
// opened with a purge step writes the file-version record at that step followed by a
// SessionLog START, as SummaryWriter(purge_step=...) does: TensorBoard then drops the events of
// earlier files at steps >= it (what a resumed run re-logs).
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>

namespace zt::monitor {

class TfEventsWriter {
 public:
  // Creates `dir` and a new event file in it. Throws zt::Error("tensorboard") when it cannot.
  explicit TfEventsWriter(const std::filesystem::path& dir,
                          std::optional<int64_t> purge_step = std::nullopt);

  // One Event with one scalar summary value; written and flushed at once.
  void add_scalar(std::string_view tag, double value, int64_t step);
  const std::filesystem::path& path() const { return path_; }

 private:
  void write_record(const std::string& payload);

  std::filesystem::path path_;
  std::ofstream out_;
};

// The TFRecord framing of one payload ([Note: tfevents format]).
std::string tfrecord(std::string_view payload);

}  // namespace zt::monitor
