// Ranks named with their hosts in the collective timeout message (comm/peer_hosts.h).
#include <gtest/gtest.h>

#include "zerotrain/comm/peer_hosts.h"

namespace zt::test {
namespace {

using comm::describe_ranks_on_hosts;
using comm::on_host_suffix;

TEST(PeerHosts, OneHostNamesRanksOnly) {
  std::vector<std::string> hosts = {"node-a", "node-a", "node-a"};
  EXPECT_EQ(describe_ranks_on_hosts({2}, hosts), "rank 2");
  EXPECT_EQ(describe_ranks_on_hosts({1, 2}, hosts), "ranks 1-2");
  EXPECT_EQ(on_host_suffix(1, hosts), "");
  EXPECT_EQ(describe_ranks_on_hosts({0, 2}, {}), "ranks 0, 2");
  EXPECT_EQ(on_host_suffix(0, {}), "");
}

TEST(PeerHosts, SeveralHostsGroupRanksByHost) {
  std::vector<std::string> hosts = {"node-a", "node-a", "node-b", "node-b", "node-c"};
  EXPECT_EQ(describe_ranks_on_hosts({3}, hosts), "rank 3 on node-b");
  EXPECT_EQ(describe_ranks_on_hosts({2, 3}, hosts), "ranks 2-3 on node-b");
  EXPECT_EQ(describe_ranks_on_hosts({1, 2, 3}, hosts), "rank 1 on node-a and ranks 2-3 on node-b");
  EXPECT_EQ(describe_ranks_on_hosts({0, 2, 4}, hosts),
            "rank 0 on node-a, rank 2 on node-b and rank 4 on node-c");
  EXPECT_EQ(on_host_suffix(4, hosts), " on node-c");
}

TEST(PeerHosts, RankOutsideTheTableIsUnknown) {
  std::vector<std::string> hosts = {"node-a", "node-b"};
  EXPECT_EQ(describe_ranks_on_hosts({5}, hosts), "rank 5 on an unknown host");
  EXPECT_EQ(on_host_suffix(-1, hosts), " on an unknown host");
}

}  // namespace
}  // namespace zt::test
