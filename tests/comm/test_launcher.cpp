// comm/launcher (the engine of `zerotrain launch`): output forwarded line by line with rank
// prefixes, the torchrun-style variables, and a failing rank stopping the others.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "zerotrain/comm/launcher.h"
#include "zerotrain/core/error.h"

namespace zt::comm {
namespace {

struct Captured {
  std::vector<std::string> out, err;
  LineSink sink() {
    return [this](const std::string& line, bool is_err) { (is_err ? err : out).push_back(line); };
  }
  bool has(const std::vector<std::string>& lines, const std::string& s) const {
    return std::find(lines.begin(), lines.end(), s) != lines.end();
  }
};

LaunchConfig ranks(int n, const std::string& script, Captured& cap) {
  LaunchConfig cfg;
  cfg.command = {"/bin/sh", "-c", script};
  for (int r = 0; r < n; ++r)
    cfg.children.push_back({"rank " + std::to_string(r), local_rank_env(r, n, 29400)});
  cfg.sink = cap.sink();
  cfg.grace_s = 2.0;
  return cfg;
}

TEST(Launcher, ForwardsLinesWithRankPrefixes) {
  Captured cap;
  LaunchOutcome o = run_children(ranks(
      2,
      "echo \"hello from $RANK of $WORLD_SIZE local $LOCAL_RANK at $MASTER_ADDR:$MASTER_PORT\"; "
      "printf 'two\\nlines' ; echo oops >&2",
      cap));
  EXPECT_EQ(o.exit_code, 0);
  EXPECT_EQ(o.failed_child, -1);
  EXPECT_TRUE(cap.has(cap.out, "[rank 0] hello from 0 of 2 local 0 at 127.0.0.1:29400"));
  EXPECT_TRUE(cap.has(cap.out, "[rank 1] hello from 1 of 2 local 1 at 127.0.0.1:29400"));
  EXPECT_TRUE(cap.has(cap.out, "[rank 1] two"));
  EXPECT_TRUE(cap.has(cap.out, "[rank 1] lines"));  // a last line without newline
  EXPECT_TRUE(cap.has(cap.err, "[rank 0] oops"));
  EXPECT_EQ(cap.out.size(), 6u);
}

TEST(Launcher, FailingRankStopsTheOthers) {
  Captured cap;
  // Rank 1 exits 3; the others would run for a minute, and say so if they were not stopped.
  LaunchOutcome o = run_children(
      ranks(3, "if [ $RANK = 1 ]; then echo failing; exit 3; fi; sleep 60; echo not-stopped", cap));
  EXPECT_EQ(o.exit_code, 3);
  EXPECT_EQ(o.failed_child, 1);
  EXPECT_EQ(o.reason, "exited with code 3");
  EXPECT_TRUE(cap.has(cap.out, "[rank 1] failing"));
  EXPECT_FALSE(cap.has(cap.out, "[rank 0] not-stopped"));
  EXPECT_FALSE(cap.has(cap.out, "[rank 2] not-stopped"));
}

TEST(Launcher, RankIgnoringSigtermIsKilled) {
  Captured cap;
  LaunchConfig cfg =
      ranks(2, "if [ $RANK = 0 ]; then exit 5; fi; trap '' TERM; sleep 60; echo not-stopped", cap);
  cfg.grace_s = 0.2;
  LaunchOutcome o = run_children(cfg);
  EXPECT_EQ(o.exit_code, 5);
  EXPECT_EQ(o.failed_child, 0);
  EXPECT_FALSE(cap.has(cap.out, "[rank 1] not-stopped"));
}

TEST(Launcher, SignalNamesTheSignal) {
  Captured cap;
  LaunchOutcome o = run_children(ranks(1, "kill -SEGV $$", cap));
  EXPECT_EQ(o.failed_child, 0);
  EXPECT_EQ(o.reason, "killed by signal SIGSEGV");
  EXPECT_EQ(o.exit_code, 128 + 11);
}

TEST(Launcher, MissingProgramFailsWith127) {
  Captured cap;
  LaunchConfig cfg;
  cfg.command = {"/no/such/program"};
  cfg.children = {{"rank 0", {}}};
  cfg.sink = cap.sink();
  LaunchOutcome o = run_children(cfg);
  EXPECT_EQ(o.exit_code, 127);
  ASSERT_EQ(cap.err.size(), 1u);
  EXPECT_NE(cap.err[0].find("[rank 0] [launch] cannot run /no/such/program"), std::string::npos);
}

TEST(Launcher, BadConfig) {
  LaunchConfig cfg;
  cfg.children = {{"rank 0", {}}};
  EXPECT_THROW(run_children(cfg), ValueError);
  cfg.command = {"true"};
  cfg.children.clear();
  EXPECT_THROW(run_children(cfg), ValueError);
}

}  // namespace
}  // namespace zt::comm
