// The narrow collective interface every backend implements: all_reduce, reduce_scatter,
// all_gather, broadcast, barrier, split; and point-to-point exchange where a backend has it. MPI
// (host buffers, mpi_communicator.h), NCCL (device buffers on a stream, nccl/nccl_communicator.h)
// and a one-rank stand-in (self_communicator.h).
// Tested by tests/comm/ (one rank) and tests/mpi/ (2 and 4 ranks under mpirun).
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "zerotrain/core/dtype.h"
#include "zerotrain/core/stream.h"

namespace zt::comm {

// avg divides the sum by the world size (floating dtypes only).
enum class ReduceOp { sum, avg };

const char* reduce_op_name(ReduceOp op);

// One message of an exchange: `count` elements to or from rank `peer` of the communicator.
struct SendTo {
  int peer = 0;
  const void* data = nullptr;
  size_t count = 0;
};
struct RecvFrom {
  int peer = 0;
  void* data = nullptr;
  size_t count = 0;
};

// [Note: collective semantics]
// - Every rank of the communicator calls the same collectives in the same order with the same
//   counts and dtype; a rank that does not arrive makes the others fail after the timeout (see
//   [Note: collective timeout]), never hang.
// - Buffers live where the backend wants them: host memory for MPI and Self, device memory of the
//   communicator's device for NCCL. `stream` orders the work: NCCL enqueues on it and returns
//   (the caller synchronizes or waits on an event); host backends require Stream::host() and
//   return when the result is in place.
// - Counts are elements. reduce_scatter and all_gather move equal shards: pad uneven buffers with
//   shard_layout.h. In-place use: all_reduce with send == recv; reduce_scatter with recv ==
//   send + rank * recv_count; all_gather with send == recv + rank * send_count.
class Communicator {
 public:
  virtual ~Communicator() = default;

  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual std::string backend_name() const = 0;  // "mpi", "nccl", "self"
  double timeout_seconds() const { return timeout_s_; }

  // recv[i] = op over ranks of send[i], i < count.
  virtual void all_reduce(const void* send, void* recv, size_t count, DType dtype, ReduceOp op,
                          Stream stream) = 0;
  // send holds size() * recv_count elements; rank r receives the reduction of chunk r.
  virtual void reduce_scatter(const void* send, void* recv, size_t recv_count, DType dtype,
                              ReduceOp op, Stream stream) = 0;
  // recv (size() * send_count elements) = every rank's send concatenated in rank order.
  virtual void all_gather(const void* send, void* recv, size_t send_count, DType dtype,
                          Stream stream) = 0;
  // buffer on every rank = buffer on root.
  virtual void broadcast(void* buffer, size_t count, DType dtype, int root, Stream stream) = 0;
  // Returns when every rank has called it (host side; NCCL also drains its own work).
  virtual void barrier() = 0;
  // Collective: ranks with the same color form a new communicator, ordered by (key, rank).
  // color < 0 returns nullptr for that rank.
  virtual std::unique_ptr<Communicator> split(int color, int key) = 0;
  // Point-to-point, not collective: posts every send and receive at once and returns when all are
  // done. Each peer posts the mirrored messages (same counts and dtype); between two ranks,
  // messages match in the order they are posted. A message to this rank itself is refused.
  // Backends without it (self, nccl) throw ValueError naming the backend; the MPI backend bounds
  // the wait by the timeout ([Note: collective timeout]).
  virtual void exchange(const std::vector<SendTo>& sends, const std::vector<RecvFrom>& recvs,
                        DType dtype, Stream stream);

 protected:
  explicit Communicator(double timeout_s) : timeout_s_(timeout_s) {}
  double timeout_s_;
};

// "0-3" for consecutive ranks, "0, 2, 5" otherwise; used in error messages.
std::string describe_ranks(const std::vector<int>& ranks);

// Argument checks shared by the backends (throw ValueError / DTypeError / DeviceError naming the
// collective): avg needs a floating dtype; host backends need Stream::host().
void check_reduce_args(const char* what, DType dtype, ReduceOp op);
void check_host_stream(const char* what, Stream stream, const std::string& backend);
void check_root(const char* what, int root, int size);
// A point-to-point peer must be another rank of the communicator.
void check_peer(const char* what, int peer, int rank, int size);

}  // namespace zt::comm
