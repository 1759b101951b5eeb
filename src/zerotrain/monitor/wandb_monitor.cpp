// DeepSpeed's wandb monitor as an offline run; see wandb_monitor.h. Tested by
// tests/monitor/test_wandb_offline.cpp.
#include "zerotrain/monitor/wandb_monitor.h"

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <exception>
#include <random>
#include <utility>
#include <vector>

#include "zerotrain/core/error.h"
#include "zerotrain/core/process_info.h"
#include "zerotrain/monitor/metrics_csv.h"
#include "zerotrain/monitor/proto_wire.h"

namespace zt::monitor {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view kComponent = "wandb";

// wandb_internal.Record fields ([Note: wandb offline run]).
constexpr int kNum = 1, kHistory = 2, kSummary = 3, kRun = 17, kExit = 18, kFinal = 20,
              kHeader = 21, kInfo = 200;

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string random_id() {
  static constexpr char kChars[] = "abcdefghijklmnopqrstuvwxyz0123456789";
  std::random_device rd;
  std::uniform_int_distribution<int> pick(0, 35);
  std::string id;
  for (int i = 0; i < 8; ++i)
    id += kChars[pick(rd)];
  return id;
}

// A JSON number as wandb's value_json holds it.
std::string json_number(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
  return format_metric(v);
}

// {key 1, value_json 16}: a HistoryItem, SummaryItem or ConfigItem.
std::string item(std::string_view key, std::string_view value_json) {
  proto::Writer w;
  w.bytes(1, key);
  w.bytes(16, value_json);
  return w.data();
}

}  // namespace

fs::path WandbMonitor::make_run_dir(const fs::path& wandb_dir, const std::string& id) {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  localtime_r(&t, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d_%H%M%S", &tm);
  const fs::path dir = wandb_dir / str("offline-run-", stamp, "-", id);
  std::error_code ec;
  fs::create_directories(dir / "files", ec);
  if (ec)
    throw Error(kComponent, str(dir.string(), ": cannot create the directory: ", ec.message()));
  const fs::path latest = wandb_dir / "latest-run";
  fs::remove(latest, ec);
  fs::create_directory_symlink(dir.filename(), latest, ec);  // a convenience; errors ignored
  return dir;
}

WandbMonitor::WandbMonitor(const fs::path& wandb_dir, const config::WandbConfig& settings)
    : id_(random_id()),
      run_dir_(make_run_dir(wandb_dir, id_)),
      log_(run_dir_ / str("run-", id_, ".wandb")),
      start_(now_seconds()),
      exceptions_at_start_(std::uncaught_exceptions()) {
  proto::Writer version;
  version.bytes(1, "zerotrain");  // producer
  version.bytes(2, "0.40.0");     // min_consumer, as wandb writes it
  proto::Writer header;
  header.bytes(1, version.data());
  write_record(kHeader, header.data(), true);

  proto::Writer config;
  config.bytes(1, item("_wandb", "{}"));
  proto::Writer start_time;
  const auto whole = static_cast<int64_t>(start_);
  start_time.varint(1, static_cast<uint64_t>(whole));
  start_time.varint(2, static_cast<uint64_t>((start_ - static_cast<double>(whole)) * 1e9));
  proto::Writer run;
  run.bytes(1, id_);
  if (settings.team) run.bytes(2, *settings.team);
  run.bytes(3, settings.project);
  run.bytes(4, config.data());
  if (settings.group) run.bytes(6, *settings.group);
  run.bytes(13, host_name());
  run.bytes(17, start_time.data());
  write_record(kRun, run.data(), true);
}

WandbMonitor::~WandbMonitor() {
  try {
    const bool failed = std::uncaught_exceptions() > exceptions_at_start_;
    proto::Writer exit;
    if (failed) exit.varint(1, 1);
    const auto runtime = static_cast<int64_t>(now_seconds() - start_);
    if (runtime > 0) exit.varint(2, static_cast<uint64_t>(runtime));
    write_record(kExit, exit.data(), true);
    write_record(kFinal, "", false);
  } catch (...) {  // a destructor does not throw; the run then reads as crashed
  }
}

void WandbMonitor::write(const StepMetrics& m, int64_t samples) {
  std::vector<std::pair<std::string, double>> events;
  for (const auto& [name, value] : monitor_events(m))
    events.emplace_back("Train/Samples/" + name, value);
  write_history(events, samples);
}

void WandbMonitor::write(const EvalMetrics& m, int64_t samples) {
  write_history(eval_monitor_events(m), samples);
}

void WandbMonitor::write_history(const std::vector<std::pair<std::string, double>>& events,
                                 int64_t samples) {
  const double now = now_seconds();
  std::vector<std::string> items;
  for (const auto& [tag, value] : events)
    items.push_back(item(tag, json_number(value)));
  items.push_back(item("_step", std::to_string(samples)));
  items.push_back(item("_runtime", format_metric(now - start_)));
  char stamp[32];
  std::snprintf(stamp, sizeof stamp, "%.6f", now);
  items.push_back(item("_timestamp", stamp));
  proto::Writer history, summary, step;
  for (const std::string& i : items) {
    history.bytes(1, i);
    summary.bytes(1, i);
  }
  step.varint(1, static_cast<uint64_t>(samples));
  history.bytes(2, step.data());
  write_record(kHistory, history.data(), false);
  write_record(kSummary, summary.data(), false);
}

void WandbMonitor::write_record(int field, const std::string& message, bool with_info) {
  proto::Writer r;
  r.varint(kNum, static_cast<uint64_t>(++num_));
  r.bytes(field, message);
  if (with_info) {
    proto::Writer info;
    info.bytes(1, id_);
    r.bytes(kInfo, info.data());
  }
  log_.write(r.data());
}

}  // namespace zt::monitor
