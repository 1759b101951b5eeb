// metrics.csv and DeepSpeed's csv_monitor files; see metrics_csv.h. Tested by
// tests/train/test_train_outputs.cpp.
#include "zerotrain/monitor/metrics_csv.h"

#include <algorithm>
#include <charconv>
#include <sstream>
#include <system_error>
#include <utility>
#include <vector>

#include "zerotrain/core/error.h"
#include "zerotrain/core/files.h"

namespace zt::monitor {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view kComponent = "metrics";

// Every file of the layout, by its event's full tag.
constexpr const char* kMonitorTags[] = {"Train/Samples/train_loss",
                                        "Train/Samples/lr",
                                        "Train/Samples/loss_scale",
                                        "Train/Samples/elapsed_time_ms_forward",
                                        "Train/Samples/elapsed_time_ms_backward",
                                        "Train/Samples/elapsed_time_ms_backward_allreduce",
                                        "Train/Samples/elapsed_time_ms_step",
                                        "Eval/Samples/eval_loss",
                                        "Eval/Samples/eval_perplexity"};

constexpr std::string_view kTrainPrefix = "Train/Samples/";

// "Train/Samples/lr" -> <dir>/Train_Samples_lr.csv
fs::path monitor_file(const fs::path& dir, const std::string& tag) {
  std::string name = tag;
  std::replace(name.begin(), name.end(), '/', '_');
  return dir / (name + ".csv");
}

bool has_content(const fs::path& path) {
  std::error_code ec;
  return fs::exists(path, ec) && fs::file_size(path, ec) > 0;
}

std::ofstream open_for(const fs::path& path, bool append) {
  std::ofstream out(path, append ? std::ios::app : std::ios::trunc);
  if (!out) throw Error(kComponent, str(path.string(), ": cannot open for writing"));
  return out;
}

void check_written(const std::ofstream& out, const fs::path& path) {
  if (!out) throw Error(kComponent, str(path.string(), ": write failed"));
}

}  // namespace

std::vector<std::pair<std::string, double>> monitor_events(const StepMetrics& m) {
  std::vector<std::pair<std::string, double>> e = {{"train_loss", m.loss}, {"lr", m.lr}};
  if (m.loss_scaling) e.emplace_back("loss_scale", m.loss_scale);
  if (m.wall_clock) {
    e.emplace_back("elapsed_time_ms_forward", m.wall_clock->forward_ms);
    e.emplace_back("elapsed_time_ms_backward", m.wall_clock->backward_ms);
    e.emplace_back("elapsed_time_ms_backward_allreduce", m.wall_clock->comm_ms);
    e.emplace_back("elapsed_time_ms_step", m.wall_clock->step_ms);
  }
  return e;
}

std::vector<std::pair<std::string, double>> eval_monitor_events(const EvalMetrics& m) {
  return {{"Eval/Samples/eval_loss", m.loss}, {"Eval/Samples/eval_perplexity", m.perplexity}};
}

void drop_csv_rows_after(const fs::path& path, int64_t max_first) {
  if (!fs::exists(path)) return;
  std::istringstream in(read_text_file(path, kComponent));
  std::string kept, line;
  size_t columns = 0;
  if (std::getline(in, line)) {
    kept = line + '\n';
    columns = static_cast<size_t>(std::count(line.begin(), line.end(), ',')) + 1;
  }
  while (std::getline(in, line)) {
    const size_t comma = line.find(',');
    if (comma == std::string::npos) continue;
    int64_t first = 0;
    const auto [end, ec] = std::from_chars(line.data(), line.data() + comma, first);
    const bool whole =
        ec == std::errc() && end == line.data() + comma &&
        static_cast<size_t>(std::count(line.begin(), line.end(), ',')) + 1 == columns;
    if (!whole || first > max_first) continue;
    kept += line;
    kept += '\n';
  }
  write_file_atomic(path, kept);
}

// The column names of a CSV file's first line; none for a missing or empty file.
std::vector<std::string> header_columns(const fs::path& path) {
  std::vector<std::string> columns;
  if (!has_content(path)) return columns;
  std::istringstream in(read_text_file(path, kComponent));
  std::string line, name;
  std::getline(in, line);
  std::istringstream names(line);
  while (std::getline(names, name, ','))
    columns.push_back(name);
  return columns;
}

CsvMetricsWriter::CsvMetricsWriter(const fs::path& path, bool append, bool evaluates)
    : path_(path),
      out_(open_for(path, append)),
      evaluates_(evaluates),
      columns_(append ? header_columns(path) : std::vector<std::string>{}) {}

void CsvMetricsWriter::write(const StepMetrics& m) {
  const auto fields = metric_fields(m);
  if (columns_.empty()) {
    for (const auto& field : fields)
      columns_.push_back(field.first);
    if (evaluates_)
      for (const auto& field : eval_fields(EvalMetrics{}))
        columns_.push_back(field.first);
    for (size_t i = 0; i < columns_.size(); ++i)
      out_ << (i ? "," : "") << columns_[i];
    out_ << '\n';
    for (const EvalMetrics& e : pending_)
      write_row(e.step, eval_fields(e));
    pending_.clear();
  }
  write_row(m.step, fields);
}

void CsvMetricsWriter::write(const EvalMetrics& m) {
  if (columns_.empty())
    pending_.push_back(m);
  else
    write_row(m.step, eval_fields(m));
}

void CsvMetricsWriter::write_row(int64_t step,
                                 const std::vector<std::pair<std::string, double>>& fields) {
  out_ << step;
  for (size_t i = 1; i < columns_.size(); ++i) {
    out_ << ',';
    for (const auto& [name, value] : fields)
      if (name == columns_[i]) {
        out_ << format_metric(value);
        break;
      }
  }
  out_ << '\n';
  out_.flush();
  check_written(out_, path_);
}

CsvMonitor::CsvMonitor(const fs::path& dir, bool append) : dir_(dir) {
  fs::create_directories(dir_);
  for (const char* tag : kMonitorTags) {
    const fs::path path = monitor_file(dir_, tag);
    if (append && has_content(path))
      started_[tag] = true;
    else
      fs::remove(path);
  }
}

void CsvMonitor::drop_after(const fs::path& dir, int64_t samples) {
  for (const char* tag : kMonitorTags)
    drop_csv_rows_after(monitor_file(dir, tag), samples);
}

void CsvMonitor::write(const StepMetrics& m, int64_t samples) {
  for (const auto& [event, value] : monitor_events(m))
    write_one(std::string(kTrainPrefix) + event, samples, value);
}

void CsvMonitor::write(const EvalMetrics& m, int64_t samples) {
  for (const auto& [tag, value] : eval_monitor_events(m))
    write_one(tag, samples, value);
}

void CsvMonitor::write_one(const std::string& tag, int64_t samples, double value) {
  const fs::path path = monitor_file(dir_, tag);
  std::ofstream out = open_for(path, true);
  bool& started = started_[tag];
  if (!started) out << "step," << tag.substr(tag.rfind('/') + 1) << '\n';
  started = true;
  out << samples << ',' << format_metric(value) << '\n';
  out.flush();
  check_written(out, path);
}

}  // namespace zt::monitor
