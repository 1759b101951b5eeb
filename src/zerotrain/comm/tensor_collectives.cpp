// Tensor front-ends of the collectives. See tensor_collectives.h.
#include "zerotrain/comm/tensor_collectives.h"

#include <cstring>

#include "zerotrain/core/error.h"

namespace zt::comm {
namespace {

void check_tensor(const char* what, const char* name, const Tensor& t) {
  if (!t.defined()) throw ValueError("comm", str(what, ": ", name, " is undefined"));
  if (!t.is_contiguous())
    throw ShapeError("comm", str(what, ": ", name, " must be contiguous, got ", t.describe()));
}

void check_pair(const char* what, const Tensor& full, const Tensor& shard, int size) {
  check_tensor(what, "full", full);
  check_tensor(what, "shard", shard);
  if (full.dtype() != shard.dtype())
    throw DTypeError("comm",
                     str(what, ": full is ", full.describe(), " but shard is ", shard.describe()));
  if (full.numel() != shard.numel() * size)
    throw ShapeError("comm", str(what, ": full has ", full.numel(), " elements, expected shard's ",
                                 shard.numel(), " x ", size, " ranks (pad with shard_layout)"));
}

}  // namespace

void all_reduce(Communicator& comm, const Tensor& t, ReduceOp op, Stream stream) {
  check_tensor("all_reduce", "tensor", t);
  comm.all_reduce(t.data(), t.data(), static_cast<size_t>(t.numel()), t.dtype(), op, stream);
}

void reduce_scatter(Communicator& comm, const Tensor& full, const Tensor& shard, ReduceOp op,
                    Stream stream) {
  check_pair("reduce_scatter", full, shard, comm.size());
  comm.reduce_scatter(full.data(), shard.data(), static_cast<size_t>(shard.numel()), shard.dtype(),
                      op, stream);
}

void all_gather(Communicator& comm, const Tensor& shard, const Tensor& full, Stream stream) {
  check_pair("all_gather", full, shard, comm.size());
  comm.all_gather(shard.data(), full.data(), static_cast<size_t>(shard.numel()), shard.dtype(),
                  stream);
}

void broadcast(Communicator& comm, const Tensor& t, int root, Stream stream) {
  check_tensor("broadcast", "tensor", t);
  comm.broadcast(t.data(), static_cast<size_t>(t.numel()), t.dtype(), root, stream);
}

std::vector<uint64_t> all_gather_words(Communicator& comm, uint64_t word, Device device,
                                       Stream stream) {
  Tensor mine = Tensor::empty({1}, DType::i64, Device::cpu());
  std::memcpy(mine.data(), &word, sizeof word);
  const Tensor send = mine.to(device, stream);
  const Tensor all = Tensor::empty({comm.size()}, DType::i64, device, stream);
  all_gather(comm, send, all, stream);
  const Tensor host = all.to(Device::cpu(), stream);
  synchronize(stream);
  std::vector<uint64_t> words(static_cast<size_t>(comm.size()));
  std::memcpy(words.data(), host.data(), words.size() * sizeof(uint64_t));
  return words;
}

}  // namespace zt::comm
