// The reduce-scatter of hybrid sharding (HSDP): a buffer cut into one chunk per rank of this rank's
// shard group, each chunk summed over every rank of the world (the group and its replicas), in
// global rank order. Tested by tests/mpi/test_hybrid_reduce.cpp (bitwise against the flat
// reduce_scatter over the world).
#pragma once

#include <cstddef>

#include "zerotrain/comm/communicator.h"

namespace zt::comm {

// [Note: hybrid reduction]
// Hybrid sharding cuts a world of W ranks into R = W / g groups of g consecutive ranks: world rank
// k * g + i is member i of `group` k and replica k of `replicas` (the R ranks that hold member i's
// shard). A gradient must still be summed over all W ranks, and on host backends bitwise as the
// flat reduce_scatter sums it ([Note: deterministic reductions]): for each element, rank 0's
// value + rank 1's + ... + rank W-1's, accumulated in f32, rounded once. Reducing within the
// group and then across groups would compute (r0 + r1) + (r2 + r3): another order, other bits.
// So the sum is passed along the groups as a running f32 partial:
// 1. within the group, member i receives every member's contribution to chunk i (each rank
//    sends and receives (g - 1) chunks: the traffic of a reduce-scatter);
// 2. group 0's member i adds its members' contributions in rank order; group k > 0's member i
//    receives the f32 partial of chunk i from group k - 1's member i, adds its own members'
//    contributions in rank order and passes the partial on to group k + 1's;
// 3. the last group rounds the sum once (avg: times 1 / W first) and broadcasts the chunk to
//    the other replicas.
// Only chunk-sized messages cross groups: one f32 partial per hop and the broadcast. The chain
// runs in pieces of kHybridPiece elements, so group k + 1 works on one piece while group k
// works on the next. Every element's result is thus the sequential sum over world ranks
// 0, 1, ..., W - 1, bitwise the flat reduce_scatter's, whatever g.
// On a device stream (NCCL) the rank-ordered sum is not available (NCCL's own reductions are not
// rank-ordered either, see [Note: communication dtype] in zero/grad_comm.h): the chunk is
// reduce-scattered within the group and then all-reduced over the replicas, which agrees with
// the flat reduce_scatter to within rounding, not bitwise.
inline constexpr size_t kHybridPiece = size_t{1} << 20;

// recv (recv_count elements) = op over every rank of group x replicas of chunk group.rank() of
// send (group.size() * recv_count elements), summed in global rank order (replica-major). Floating
// dtypes only; recv may be send's own chunk (in place). Collective over both communicators: every
// rank of the world calls it with the same counts, dtype and op.
void hybrid_reduce_scatter(Communicator& group, Communicator& replicas, const void* send,
                           void* recv, size_t recv_count, DType dtype, ReduceOp op, Stream stream);

}  // namespace zt::comm
