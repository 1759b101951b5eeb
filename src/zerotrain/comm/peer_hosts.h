// Naming ranks together with the hosts they run on, for the messages of a collective that timed
// out ([Note: collective timeout] in mpi_wait.h). Tested by tests/comm/test_peer_hosts.cpp.
#pragma once

#include <string>
#include <vector>

namespace zt::comm {

// "rank 3", "ranks 1-2" when every rank of the job runs on one host (or hosts are unknown: an
// empty `world_hosts`); otherwise each rank with its host, grouped by host in rank order:
// "rank 3 on node-b", "ranks 2-3 on node-b", "rank 1 on node-a and ranks 4-5 on node-c".
// world_hosts[r] is the host of world rank r; `ranks` are world ranks, ascending.
std::string describe_ranks_on_hosts(const std::vector<int>& ranks,
                                    const std::vector<std::string>& world_hosts);

// " on HOST" for world rank `rank` when the job spans several hosts, else "".
std::string on_host_suffix(int rank, const std::vector<std::string>& world_hosts);

}  // namespace zt::comm
