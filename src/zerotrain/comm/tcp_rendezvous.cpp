// TCP rendezvous for bootstrap bytes. See tcp_rendezvous.h.
#include "zerotrain/comm/tcp_rendezvous.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "zerotrain/core/error.h"

namespace zt::comm {
namespace {

using clock = std::chrono::steady_clock;

class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(Fd&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  Fd& operator=(Fd&& o) noexcept {
    std::swap(fd_, o.fd_);
    return *this;
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

[[noreturn]] void fail(const std::string& what) {
  throw BackendError("comm", str("rendezvous: ", what, ": ", std::strerror(errno)));
}

int ms_left(clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now());
  return left.count() > 0 ? static_cast<int>(left.count()) : 0;
}

// Waits until fd is readable (POLLIN) or writable (POLLOUT); throws at the deadline.
void wait_for(int fd, short events, clock::time_point deadline, const std::string& what) {
  for (;;) {
    pollfd p{fd, events, 0};
    int rc = ::poll(&p, 1, ms_left(deadline));
    if (rc > 0) return;
    if (rc == 0) throw BackendError("comm", str("rendezvous: timed out ", what));
    if (errno != EINTR) fail(what);
  }
}

void send_all(int fd, const void* data, size_t n, clock::time_point deadline) {
  const auto* p = static_cast<const uint8_t*>(data);
  while (n > 0) {
    wait_for(fd, POLLOUT, deadline, "sending");
    ssize_t k = ::send(fd, p, n, MSG_NOSIGNAL);
    if (k < 0 && errno != EINTR && errno != EAGAIN) fail("send");
    if (k > 0) p += k, n -= static_cast<size_t>(k);
  }
}

// Reads n bytes; false when the peer closed or reset the connection before they all came.
bool recv_all_unless_closed(int fd, void* data, size_t n, clock::time_point deadline) {
  auto* p = static_cast<uint8_t*>(data);
  while (n > 0) {
    wait_for(fd, POLLIN, deadline, "receiving");
    ssize_t k = ::recv(fd, p, n, 0);
    if (k == 0 || (k < 0 && errno == ECONNRESET)) return false;
    if (k < 0 && errno != EINTR && errno != EAGAIN) fail("recv");
    if (k > 0) p += k, n -= static_cast<size_t>(k);
  }
  return true;
}

void recv_all(int fd, void* data, size_t n, clock::time_point deadline) {
  if (!recv_all_unless_closed(fd, data, n, deadline))
    throw BackendError("comm", "rendezvous: the peer closed the connection");
}

sockaddr_in resolve(const std::string& addr, int port) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (::getaddrinfo(addr.c_str(), nullptr, &hints, &res) != 0 || !res)
    throw ValueError("comm", str("MASTER_ADDR: cannot resolve \"", addr, "\""));
  sockaddr_in sa{};
  std::memcpy(&sa, res->ai_addr, sizeof(sa));
  ::freeaddrinfo(res);
  sa.sin_port = htons(static_cast<uint16_t>(port));
  return sa;
}

std::vector<uint8_t> serve(const sockaddr_in& sa, int world, const std::vector<uint8_t>& payload,
                           clock::time_point deadline) {
  Fd lst(::socket(AF_INET, SOCK_STREAM, 0));
  if (lst.get() < 0) fail("socket");
  int one = 1;
  ::setsockopt(lst.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in any = sa;
  any.sin_addr.s_addr = htonl(INADDR_ANY);
  // See [Note: TCP self-connect].
  while (::bind(lst.get(), reinterpret_cast<const sockaddr*>(&any), sizeof(any)) != 0) {
    if (errno != EADDRINUSE || ms_left(deadline) == 0) fail(str("bind port ", ntohs(sa.sin_port)));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (::listen(lst.get(), world) != 0) fail("listen");
  const uint64_t size = payload.size();
  std::vector<Fd> peers;
  for (int served = 1; served < world; ++served) {
    wait_for(lst.get(), POLLIN, deadline,
             str("waiting for ", world - served, " rank(s) to connect"));
    Fd c(::accept(lst.get(), nullptr, nullptr));
    if (c.get() < 0) fail("accept");
    send_all(c.get(), &size, sizeof(size), deadline);
    send_all(c.get(), payload.data(), payload.size(), deadline);
    peers.push_back(std::move(c));
  }
  for (Fd& c : peers) {  // each peer acknowledges with one byte, so none misses the payload
    uint8_t ack = 0;
    recv_all(c.get(), &ack, 1, deadline);
  }
  return payload;
}

// [Note: TCP self-connect] A client that keeps connecting to a local port nobody listens on yet
// can be handed that very port as its own source port and "connect" to itself (TCP simultaneous
// open). It would then hold rank 0's port, whose bind fails with EADDRINUSE. Such a connection
// is dropped at once, and rank 0 retries its bind until the deadline.
bool connected_to_itself(int fd) {
  sockaddr_in self{}, peer{};
  socklen_t a = sizeof(self), b = sizeof(peer);
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&self), &a) != 0) return false;
  if (::getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &b) != 0) return false;
  return self.sin_port == peer.sin_port && self.sin_addr.s_addr == peer.sin_addr.s_addr;
}

// [Note: a listener of the previous rendezvous] Two rendezvous in a row on one port (the NCCL id,
// then the MPI name server's address) leave a window: rank 0 closes the first listener only after
// every ack came, so a rank that acked and went straight on to the second rendezvous can connect
// into the first listener's backlog. Closing that listener resets the connection before a byte
// was sent; the rank then connects again, as it does while rank 0 does not listen yet. (Taken as
// fatal, this left rank 0 waiting for it until the timeout: tests/hosts/two_hosts.py saw it in
// about one torchrun-style start of five.)
std::vector<uint8_t> fetch(const sockaddr_in& sa, clock::time_point deadline) {
  for (;;) {
    Fd c(::socket(AF_INET, SOCK_STREAM, 0));
    if (c.get() < 0) fail("socket");
    uint64_t size = 0;
    if (::connect(c.get(), reinterpret_cast<const sockaddr*>(&sa), sizeof(sa)) == 0 &&
        !connected_to_itself(c.get()) &&
        recv_all_unless_closed(c.get(), &size, sizeof(size), deadline)) {
      if (size > (1u << 20)) throw BackendError("comm", str("rendezvous: bad payload size ", size));
      std::vector<uint8_t> data(size);
      recv_all(c.get(), data.data(), data.size(), deadline);
      uint8_t ack = 1;
      send_all(c.get(), &ack, 1, deadline);
      return data;
    }
    if (ms_left(deadline) == 0)
      throw BackendError("comm", "rendezvous: timed out connecting to rank 0");
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // rank 0 may not listen yet
  }
}

}  // namespace

std::vector<uint8_t> tcp_broadcast(const std::string& addr, int port, int rank, int world,
                                   const std::vector<uint8_t>& payload, double timeout_s) {
  if (port < 1 || port > 65535) throw ValueError("comm", str("rendezvous port ", port));
  if (rank < 0 || rank >= world) throw ValueError("comm", str("rendezvous rank ", rank));
  auto deadline = clock::now() + std::chrono::duration_cast<clock::duration>(
                                     std::chrono::duration<double>(timeout_s));
  sockaddr_in sa = resolve(addr, port);
  if (world == 1) return payload;
  try {
    return rank == 0 ? serve(sa, world, payload, deadline) : fetch(sa, deadline);
  } catch (const BackendError& e) {
    std::string msg = e.what();
    msg.erase(0, std::strlen("[comm] "));
    throw BackendError("comm",
                       str(msg, " (rank ", rank, " of ", world, ", ", addr, ":", port, ")"));
  }
}

int find_free_port() {
  Fd s(::socket(AF_INET, SOCK_STREAM, 0));
  if (s.get() < 0) fail("socket");
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(s.get(), reinterpret_cast<const sockaddr*>(&sa), sizeof(sa)) != 0) fail("bind");
  socklen_t len = sizeof(sa);
  if (::getsockname(s.get(), reinterpret_cast<sockaddr*>(&sa), &len) != 0) fail("getsockname");
  return ntohs(sa.sin_port);
}

}  // namespace zt::comm
