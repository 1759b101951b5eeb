// Ranks named with their hosts. See peer_hosts.h.
#include "zerotrain/comm/peer_hosts.h"

#include <algorithm>
#include <functional>

#include "zerotrain/comm/communicator.h"
#include "zerotrain/core/error.h"

namespace zt::comm {
namespace {

bool spans_several_hosts(const std::vector<std::string>& world_hosts) {
  return std::adjacent_find(world_hosts.begin(), world_hosts.end(), std::not_equal_to<>()) !=
         world_hosts.end();
}

std::string host_of(int rank, const std::vector<std::string>& world_hosts) {
  if (rank < 0 || static_cast<size_t>(rank) >= world_hosts.size()) return "an unknown host";
  return world_hosts[static_cast<size_t>(rank)];
}

std::string ranks_word(const std::vector<int>& ranks) {
  return str(ranks.size() == 1 ? "rank " : "ranks ", describe_ranks(ranks));
}

}  // namespace

std::string describe_ranks_on_hosts(const std::vector<int>& ranks,
                                    const std::vector<std::string>& world_hosts) {
  if (!spans_several_hosts(world_hosts)) return ranks_word(ranks);
  std::vector<std::string> hosts;  // in order of their first rank
  for (int r : ranks)
    if (std::find(hosts.begin(), hosts.end(), host_of(r, world_hosts)) == hosts.end())
      hosts.push_back(host_of(r, world_hosts));
  std::string out;
  for (size_t h = 0; h < hosts.size(); ++h) {
    std::vector<int> on_host;
    for (int r : ranks)
      if (host_of(r, world_hosts) == hosts[h]) on_host.push_back(r);
    out += str(h == 0 ? "" : h + 1 == hosts.size() ? " and " : ", ", ranks_word(on_host), " on ",
               hosts[h]);
  }
  return out;
}

std::string on_host_suffix(int rank, const std::vector<std::string>& world_hosts) {
  return spans_several_hosts(world_hosts) ? str(" on ", host_of(rank, world_hosts)) : "";
}

}  // namespace zt::comm
