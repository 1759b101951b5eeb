// metrics.csv with evaluations (monitor/metrics_csv.h): a run that evaluates gets the eval columns
// after the step columns, an evaluation is a row of its own (its step and eval columns filled, the
// step columns empty), a step's row leaves the eval columns empty, an evaluation before the first
// logged step waits for the header, a run without evaluation has no eval columns, and a resumed
// writer appends under the header already there, dropping rows past the checkpoint alike.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "zerotrain/monitor/metrics_csv.h"

namespace zt {
namespace {

namespace fs = std::filesystem;

using Row = std::vector<std::string>;

fs::path temp_path(const std::string& name) {
  return fs::temp_directory_path() /
         ("zt_test_metrics_csv_eval_" + std::to_string(::getpid()) + "_" + name);
}

// Every line split at commas, empty fields kept.
std::vector<Row> read_rows(const fs::path& p) {
  std::ifstream in(p);
  std::vector<Row> rows;
  for (std::string line; std::getline(in, line);) {
    Row row;
    std::string field;
    std::istringstream fields(line);
    while (std::getline(fields, field, ','))
      row.push_back(field);
    if (!line.empty() && line.back() == ',') row.emplace_back();
    rows.push_back(row);
  }
  return rows;
}

size_t column(const Row& header, const std::string& name) {
  for (size_t i = 0; i < header.size(); ++i)
    if (header[i] == name) return i;
  ADD_FAILURE() << "no column " << name;
  return 0;
}

monitor::StepMetrics step(int64_t s) {
  monitor::StepMetrics m;
  m.step = s;
  m.loss = 10.0 / static_cast<double>(s);
  m.lr = 1e-3;
  return m;
}

monitor::EvalMetrics evaluation(int64_t s) {
  monitor::EvalMetrics e;
  e.step = s;
  e.loss = 2.5;
  e.perplexity = 12.25;
  e.tokens = 512;
  e.sequences = 8;
  e.seconds = 0.5;
  return e;
}

TEST(MetricsCsvEval, EvaluationsAreRowsWithTheirOwnColumns) {
  const fs::path path = temp_path("eval.csv");
  {
    monitor::CsvMetricsWriter w(path, /*append=*/false, /*evaluates=*/true);
    w.write(evaluation(1));  // before any step: waits for the header
    w.write(step(2));
    w.write(evaluation(2));
    w.write(step(4));
  }
  const std::vector<Row> rows = read_rows(path);
  ASSERT_EQ(rows.size(), 5u);
  const Row& header = rows[0];
  const size_t steps = monitor::metric_fields(step(2)).size();
  ASSERT_EQ(header.size(), steps + 5);
  EXPECT_EQ(header[steps], "eval_loss");
  EXPECT_EQ(header.back(), "eval_seconds");
  for (const Row& r : rows)
    ASSERT_EQ(r.size(), header.size());
  const size_t loss = column(header, "loss"), eval_loss = column(header, "eval_loss");
  // The early evaluation, step 2, its evaluation, step 4: in the order they happened.
  EXPECT_EQ(rows[1][0], "1");
  EXPECT_EQ(rows[1][eval_loss], "2.5");
  EXPECT_EQ(rows[1][loss], "");
  EXPECT_EQ(rows[2][0], "2");
  EXPECT_EQ(rows[2][loss], "5");
  EXPECT_EQ(rows[2][eval_loss], "");
  EXPECT_EQ(rows[3][0], "2");
  EXPECT_EQ(rows[3][column(header, "eval_perplexity")], "12.25");
  EXPECT_EQ(rows[3][column(header, "eval_tokens")], "512");
  EXPECT_EQ(rows[3][column(header, "eval_sequences")], "8");
  EXPECT_EQ(rows[3][column(header, "eval_seconds")], "0.5");
  EXPECT_EQ(rows[3][column(header, "lr")], "");
  EXPECT_EQ(rows[4][0], "4");
  EXPECT_EQ(rows[4][loss], "2.5");

  // A resume at step 2 keeps the rows up to it and appends under the same header.
  monitor::drop_csv_rows_after(path, 2);
  {
    monitor::CsvMetricsWriter w(path, /*append=*/true, /*evaluates=*/true);
    w.write(step(3));
    w.write(evaluation(3));
  }
  const std::vector<Row> resumed = read_rows(path);
  ASSERT_EQ(resumed.size(), 6u);
  EXPECT_EQ(resumed[0], header);
  EXPECT_EQ(resumed[3][0], "2");  // step 2's evaluation kept
  EXPECT_EQ(resumed[4][loss], "3.33333333");
  EXPECT_EQ(resumed[5][eval_loss], "2.5");
  fs::remove(path);
}

TEST(MetricsCsvEval, RunWithoutEvaluationHasNoEvalColumns) {
  const fs::path path = temp_path("plain.csv");
  {
    monitor::CsvMetricsWriter w(path, /*append=*/false, /*evaluates=*/false);
    w.write(step(1));
  }
  const std::vector<Row> rows = read_rows(path);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].size(), monitor::metric_fields(step(1)).size());
  EXPECT_EQ(rows[0].back(), "reserved_gib");
  fs::remove(path);
}

}  // namespace
}  // namespace zt
