// comm/tcp_rendezvous: rank 0's bytes reach every rank (ranks as threads of this process); a
// missing rank 0 times out with a typed error.
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "zerotrain/comm/tcp_rendezvous.h"
#include "zerotrain/core/error.h"

namespace zt::comm {
namespace {

TEST(TcpRendezvous, BroadcastsRankZerosBytes) {
  const int world = 4;
  const int port = find_free_port();
  std::vector<uint8_t> payload(300);
  for (size_t i = 0; i < payload.size(); ++i)
    payload[i] = static_cast<uint8_t>(i * 7 + 1);
  std::vector<std::vector<uint8_t>> got(world);
  std::vector<std::string> errors(world);
  std::vector<std::thread> ranks;
  for (int r = world - 1; r >= 0; --r)  // clients first: they must retry until rank 0 listens
    ranks.emplace_back([&, r] {
      try {
        got[r] = tcp_broadcast("127.0.0.1", port, r, world,
                               r == 0 ? payload : std::vector<uint8_t>{}, 20.0);
      } catch (const std::exception& e) {
        errors[r] = e.what();
      }
    });
  for (auto& t : ranks)
    t.join();
  for (int r = 0; r < world; ++r) {
    EXPECT_EQ(errors[r], "") << "rank " << r;
    EXPECT_EQ(got[r], payload) << "rank " << r;
  }
}

TEST(TcpRendezvous, MissingRankZeroTimesOut) {
  const int port = find_free_port();
  try {
    tcp_broadcast("127.0.0.1", port, 1, 2, {}, 0.3);
    FAIL() << "expected BackendError";
  } catch (const BackendError& e) {
    EXPECT_NE(std::string(e.what()).find("timed out"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("rank 1 of 2"), std::string::npos) << e.what();
  }
}

TEST(TcpRendezvous, BadArguments) {
  EXPECT_THROW(tcp_broadcast("127.0.0.1", 0, 0, 2, {}, 1.0), ValueError);
  EXPECT_THROW(tcp_broadcast("127.0.0.1", 1234, 2, 2, {}, 1.0), ValueError);
  EXPECT_THROW(tcp_broadcast("no.such.host.invalid", 1234, 1, 2, {}, 1.0), ValueError);
}

}  // namespace
}  // namespace zt::comm
