// ProgressBar: formatting, rate-limited redraws on a terminal, plain periodic lines otherwise.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "zerotrain/cli/progress.h"

namespace zt::cli {
namespace {

std::string contents(std::FILE* f) {
  std::fflush(f);
  std::rewind(f);
  std::string s;
  char buf[256];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0)
    s.append(buf, n);
  return s;
}

int count(const std::string& s, char c) {
  return static_cast<int>(std::count(s.begin(), s.end(), c));
}

TEST(Progress, Formatting) {
  EXPECT_EQ(format_si_bytes(512), "512 B");
  EXPECT_EQ(format_si_bytes(1500), "1.5 kB");
  EXPECT_EQ(format_si_bytes(4.2e6), "4.2 MB");
  EXPECT_EQ(format_si_bytes(3.5e9), "3.5 GB");
  EXPECT_EQ(format_duration(7), "0:07");
  EXPECT_EQ(format_duration(754), "12:34");
  EXPECT_EQ(format_duration(3723), "1:02:03");
  EXPECT_EQ(format_duration(-1), "?");
}

TEST(Progress, StatusShowsBarRateAndEta) {
  ProgressOptions o;
  o.tty = 0;
  o.bytes = true;
  o.width = 10;
  o.clock = [] { return 0.0; };
  ProgressBar bar("enc", 4'000'000, o);
  EXPECT_EQ(bar.status(1'000'000, 2.0),
            "enc [==>       ]  25%  1.0 MB / 4.0 MB  500.0 kB/s  ETA 0:06");
  EXPECT_EQ(bar.status(0, 0.0), "enc [>         ]   0%  0 B / 4.0 MB  0 B/s  ETA ?");
  o.bytes = false;
  o.unit = "tok";
  ProgressBar open("run", 0, o);
  EXPECT_EQ(open.status(20000, 4.0), "run  20.0k tok  5000 tok/s  0:04");
}

TEST(Progress, TerminalRedrawsAreRateLimited) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  double now = 0;
  ProgressOptions o;
  o.out = f;
  o.tty = 1;
  o.min_redraw_s = 0.1;
  o.clock = [&] { return now; };
  ProgressBar bar("x", 100, o);
  EXPECT_TRUE(bar.is_tty());
  for (int i = 0; i <= 100; ++i) {
    now = i * 0.01;  // one second in all: about ten redraws
    bar.update(static_cast<uint64_t>(i));
  }
  bar.finish();
  bar.finish();
  const std::string out = contents(f);
  std::fclose(f);
  EXPECT_GE(count(out, '\r'), 9);
  EXPECT_LE(count(out, '\r'), 13);
  EXPECT_EQ(count(out, '\n'), 1);  // only finish() ends the line
  EXPECT_NE(out.find("100%"), std::string::npos);
}

TEST(Progress, PipesGetPlainLines) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  double now = 0;
  ProgressOptions o;
  o.out = f;
  o.tty = 0;
  o.line_interval_s = 5;
  o.clock = [&] { return now; };
  ProgressBar bar("x", 1000, o);
  for (int i = 0; i <= 1000; ++i) {
    now = i * 0.02;  // twenty seconds: a line at 0, 5, 10, 15, 20 s
    bar.update(static_cast<uint64_t>(i));
  }
  bar.finish();
  const std::string out = contents(f);
  std::fclose(f);
  EXPECT_EQ(count(out, '\r'), 0);
  EXPECT_EQ(count(out, '\n'), 5);  // the 20 s line already shows the final state
  EXPECT_NE(out.find("100%"), std::string::npos);
}

}  // namespace
}  // namespace zt::cli
