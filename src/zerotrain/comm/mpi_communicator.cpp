// The MPI backend: point-to-point exchanges plus host reductions in rank order, every wait bounded
// by the timeout. See [Note: deterministic reductions] (host_reduce.h) and [Note: collective
// timeout] (mpi_wait.h).
#include "zerotrain/comm/mpi_communicator.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "zerotrain/comm/host_reduce.h"
#include "zerotrain/comm/mpi_host_names.h"
#include "zerotrain/comm/mpi_wait.h"
#include "zerotrain/comm/shard_layout.h"
#include "zerotrain/core/error.h"

namespace zt::comm {
namespace {

using detail::CollectiveInfo;
using detail::PendingRequests;

// Distinct tags per collective, so that ranks calling different collectives time out with a
// message instead of exchanging each other's data.
enum Tag : int {
  tag_ar_scatter = 1,
  tag_ar_gather,
  tag_reduce_scatter,
  tag_all_gather,
  tag_bcast,
  tag_exchange
};

int byte_count(size_t count, DType dtype, const char* what) {
  size_t bytes = count * dtype_size(dtype);
  if (bytes > static_cast<size_t>(INT_MAX))
    throw ValueError("comm", str(what, ": ", bytes, " bytes per message exceed the MPI limit of ",
                                 INT_MAX, " bytes; split the buffer"));
  return static_cast<int>(bytes);
}

class MpiCommunicator final : public Communicator {
 public:
  // Takes ownership of `comm` (freed on destruction). world_ranks[i]: world rank of rank i;
  // world_hosts[w]: the host of world rank w, shared by the communicators split from the world.
  using HostTable = std::shared_ptr<const std::vector<std::string>>;
  MpiCommunicator(MPI_Comm comm, std::vector<int> world_ranks, HostTable world_hosts,
                  double timeout_s)
      : Communicator(timeout_s),
        comm_(comm),
        world_ranks_(std::move(world_ranks)),
        world_hosts_(std::move(world_hosts)) {
    ZT_MPI_CHECK(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN));
    ZT_MPI_CHECK(MPI_Comm_rank(comm_, &rank_));
    ZT_MPI_CHECK(MPI_Comm_size(comm_, &size_));
    ZT_ASSERT(static_cast<int>(world_ranks_.size()) == size_, "comm");
  }
  ~MpiCommunicator() override {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Comm_free(&comm_);
  }
  MpiCommunicator(const MpiCommunicator&) = delete;
  MpiCommunicator& operator=(const MpiCommunicator&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string backend_name() const override { return "mpi"; }

  void all_reduce(const void* send, void* recv, size_t count, DType dtype, ReduceOp op,
                  Stream stream) override {
    check_reduce_args("all_reduce", dtype, op);
    check_host_stream("all_reduce", stream, backend_name());
    ShardLayout l = shard_layout(count, size_);
    auto info = describe("all_reduce", count, dtype);
    auto* out = static_cast<char*>(recv);
    const size_t es = dtype_size(dtype);
    // Reduce my chunk straight into its place in recv, then gather the chunks in place.
    reduce_chunks(send, out + l.offset(rank_) * es, l, dtype, op, tag_ar_scatter, info);
    gather_chunks(recv, l, dtype, tag_ar_gather, info);
  }

  void reduce_scatter(const void* send, void* recv, size_t recv_count, DType dtype, ReduceOp op,
                      Stream stream) override {
    check_reduce_args("reduce_scatter", dtype, op);
    check_host_stream("reduce_scatter", stream, backend_name());
    ShardLayout l = shard_layout(recv_count * static_cast<size_t>(size_), size_);
    reduce_chunks(send, recv, l, dtype, op, tag_reduce_scatter,
                  describe("reduce_scatter", recv_count, dtype));
  }

  void all_gather(const void* send, void* recv, size_t send_count, DType dtype,
                  Stream stream) override {
    check_host_stream("all_gather", stream, backend_name());
    ShardLayout l = shard_layout(send_count * static_cast<size_t>(size_), size_);
    const size_t es = dtype_size(dtype);
    char* mine = static_cast<char*>(recv) + l.offset(rank_) * es;
    if (mine != send && send_count > 0) std::memmove(mine, send, send_count * es);
    gather_chunks(recv, l, dtype, tag_all_gather, describe("all_gather", send_count, dtype));
  }

  void broadcast(void* buffer, size_t count, DType dtype, int root, Stream stream) override {
    check_root("broadcast", root, size_);
    check_host_stream("broadcast", stream, backend_name());
    if (count == 0 || size_ == 1) return;
    const int bytes = byte_count(count, dtype, "broadcast");
    PendingRequests p;
    if (rank_ == root) {
      for (int r = 0; r < size_; ++r) {
        if (r == root) continue;
        MPI_Request req;
        ZT_MPI_CHECK(MPI_Isend(buffer, bytes, MPI_BYTE, r, tag_bcast, comm_, &req));
        p.add(req, world_ranks_[r]);
      }
    } else {
      MPI_Request req;
      ZT_MPI_CHECK(MPI_Irecv(buffer, bytes, MPI_BYTE, root, tag_bcast, comm_, &req));
      p.add(req, world_ranks_[root]);
    }
    detail::wait_all(p, describe("broadcast", count, dtype));
  }

  void barrier() override {
    PendingRequests p;
    MPI_Request req;
    ZT_MPI_CHECK(MPI_Ibarrier(comm_, &req));
    p.add(req, -1);
    detail::wait_all(p, {str("barrier on ranks ", describe_ranks(world_ranks_)),
                         world_ranks_[rank_], timeout_s_, world_hosts_.get()});
  }

  void exchange(const std::vector<SendTo>& sends, const std::vector<RecvFrom>& recvs, DType dtype,
                Stream stream) override {
    check_host_stream("exchange", stream, backend_name());
    size_t count = 0;
    PendingRequests p;
    // Posts one nonblocking request per non-empty message: the receives first.
    const auto post = [&](const auto& messages, auto start) {
      for (const auto& m : messages) {
        check_peer("exchange", m.peer, rank_, size_);
        count += m.count;
        if (m.count == 0) continue;
        MPI_Request req;
        start(m, byte_count(m.count, dtype, "exchange"), &req);
        p.add(req, world_ranks_[m.peer]);
      }
    };
    post(recvs, [&](const RecvFrom& m, int bytes, MPI_Request* req) {
      ZT_MPI_CHECK(MPI_Irecv(m.data, bytes, MPI_BYTE, m.peer, tag_exchange, comm_, req));
    });
    post(sends, [&](const SendTo& m, int bytes, MPI_Request* req) {
      ZT_MPI_CHECK(MPI_Isend(m.data, bytes, MPI_BYTE, m.peer, tag_exchange, comm_, req));
    });
    detail::wait_all(p, describe("exchange", count, dtype));
  }

  std::unique_ptr<Communicator> split(int color, int key) override {
    // Agree on (color, key) under the deadline first, so that MPI_Comm_split (blocking) starts
    // only when every rank has arrived.
    std::vector<int> mine = {color, key};
    std::vector<int> all(2 * static_cast<size_t>(size_));
    PendingRequests p;
    MPI_Request req;
    ZT_MPI_CHECK(MPI_Iallgather(mine.data(), 2, MPI_INT, all.data(), 2, MPI_INT, comm_, &req));
    p.add(req, -1);
    detail::wait_all(p, {str("split on ranks ", describe_ranks(world_ranks_)), world_ranks_[rank_],
                         timeout_s_, world_hosts_.get()});
    MPI_Comm sub = MPI_COMM_NULL;
    ZT_MPI_CHECK(MPI_Comm_split(comm_, color < 0 ? MPI_UNDEFINED : color, key, &sub));
    if (color < 0) return nullptr;
    std::vector<int> members;  // ranks of this communicator in the new one, ordered (key, rank)
    for (int r = 0; r < size_; ++r)
      if (all[2 * r] == color) members.push_back(r);
    std::stable_sort(members.begin(), members.end(),
                     [&](int a, int b) { return all[2 * a + 1] < all[2 * b + 1]; });
    std::vector<int> world;
    for (int r : members)
      world.push_back(world_ranks_[r]);
    return std::make_unique<MpiCommunicator>(sub, std::move(world), world_hosts_, timeout_s_);
  }

 private:
  CollectiveInfo describe(const char* what, size_t count, DType dtype) const {
    return {str(what, " of ", count, " ", dtype_name(dtype), " on ranks ",
                describe_ranks(world_ranks_)),
            world_ranks_[rank_], timeout_s_, world_hosts_.get()};
  }

  // Every rank sends chunk r of `send` (layout l, real elements only) to rank r; this rank sums
  // the chunks it receives in rank order into `out` (valid_numel(rank_) elements).
  void reduce_chunks(const void* send, void* out, const ShardLayout& l, DType dtype, ReduceOp op,
                     int tag, const CollectiveInfo& info) {
    const size_t es = dtype_size(dtype);
    const size_t n = l.valid_numel(rank_);
    const auto* in = static_cast<const char*>(send);
    std::vector<char> scratch(n * es * static_cast<size_t>(size_));  // [W, n] received chunks
    std::vector<const void*> contrib(static_cast<size_t>(size_));
    PendingRequests p;
    for (int r = 0; r < size_; ++r) {
      contrib[r] = r == rank_ ? in + l.offset(rank_) * es : scratch.data() + r * n * es;
      if (r == rank_) continue;
      if (n > 0) {
        MPI_Request req;
        ZT_MPI_CHECK(MPI_Irecv(scratch.data() + r * n * es, byte_count(n, dtype, "reduce"),
                               MPI_BYTE, r, tag, comm_, &req));
        p.add(req, world_ranks_[r]);
      }
      if (size_t m = l.valid_numel(r); m > 0) {
        MPI_Request req;
        ZT_MPI_CHECK(MPI_Isend(in + l.offset(r) * es, byte_count(m, dtype, "reduce"), MPI_BYTE, r,
                               tag, comm_, &req));
        p.add(req, world_ranks_[r]);
      }
    }
    detail::wait_all(p, info);
    if (n > 0) reduce_in_rank_order(contrib.data(), size_, out, n, dtype, op);
  }

  // buffer holds this rank's chunk at l.offset(rank_); afterwards every chunk is in place.
  void gather_chunks(void* buffer, const ShardLayout& l, DType dtype, int tag,
                     const CollectiveInfo& info) {
    const size_t es = dtype_size(dtype);
    auto* buf = static_cast<char*>(buffer);
    PendingRequests p;
    const size_t n = l.valid_numel(rank_);
    for (int r = 0; r < size_; ++r) {
      if (r == rank_) continue;
      if (size_t m = l.valid_numel(r); m > 0) {
        MPI_Request req;
        ZT_MPI_CHECK(MPI_Irecv(buf + l.offset(r) * es, byte_count(m, dtype, "gather"), MPI_BYTE, r,
                               tag, comm_, &req));
        p.add(req, world_ranks_[r]);
      }
      if (n > 0) {
        MPI_Request req;
        ZT_MPI_CHECK(MPI_Isend(buf + l.offset(rank_) * es, byte_count(n, dtype, "gather"), MPI_BYTE,
                               r, tag, comm_, &req));
        p.add(req, world_ranks_[r]);
      }
    }
    detail::wait_all(p, info);
  }

  MPI_Comm comm_;
  std::vector<int> world_ranks_;
  HostTable world_hosts_;
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace

MpiRuntime::MpiRuntime() {
  int initialized = 0;
  ZT_MPI_CHECK(MPI_Initialized(&initialized));
  if (initialized) return;
  int provided = 0;
  ZT_MPI_CHECK(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided));
  owns_ = true;
}

MpiRuntime::~MpiRuntime() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (owns_ && !finalized) MPI_Finalize();
}

int MpiRuntime::world_rank() const {
  int r = 0;
  ZT_MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &r));
  return r;
}

int MpiRuntime::world_size() const {
  int s = 1;
  ZT_MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &s));
  return s;
}

std::unique_ptr<Communicator> make_mpi_job_communicator(MPI_Comm job, double timeout_s) {
  if (!(timeout_s > 0)) throw ValueError("comm", str("timeout must be > 0 s, got ", timeout_s));
  int size = 1;
  ZT_MPI_CHECK(MPI_Comm_size(job, &size));
  std::vector<int> world(static_cast<size_t>(size));
  std::iota(world.begin(), world.end(), 0);
  auto hosts = std::make_shared<const std::vector<std::string>>(
      detail::gather_host_names(job, timeout_s));
  return std::make_unique<MpiCommunicator>(job, std::move(world), std::move(hosts), timeout_s);
}

std::unique_ptr<Communicator> make_mpi_world_communicator(double timeout_s) {
  if (!(timeout_s > 0)) throw ValueError("comm", str("timeout must be > 0 s, got ", timeout_s));
  MPI_Comm dup = MPI_COMM_NULL;
  ZT_MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
  return make_mpi_job_communicator(dup, timeout_s);
}

}  // namespace zt::comm
