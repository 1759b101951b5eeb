// A minimal TCP rendezvous: rank 0 serves a byte string on MASTER_ADDR:MASTER_PORT and every other
// rank fetches it. Bootstraps NCCL (its unique id) when ranks were started torchrun-style, without
// an MPI world. Tested by tests/comm/test_tcp_rendezvous.cpp (ranks as threads).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace zt::comm {

// Collective over `world` processes. Rank 0 passes `payload` and returns it after every other rank
// has received it; the others connect to addr:port (retrying while rank 0 starts) and return what
// it sent. Throws BackendError when the exchange does not complete within timeout_s.
std::vector<uint8_t> tcp_broadcast(const std::string& addr, int port, int rank, int world,
                                   const std::vector<uint8_t>& payload, double timeout_s);

// A TCP port on 127.0.0.1 that was free a moment ago (for `zerotrain launch`).
int find_free_port();

}  // namespace zt::comm
