// The host-side reduction of the MPI and Self backends: out[i] = contribution 0 [i] + contribution
// 1 [i] + ... in rank order. Tested by tests/comm/test_host_reduce.cpp.
#pragma once

#include <cstddef>

#include "zerotrain/comm/communicator.h"

namespace zt::comm {

// [Note: deterministic reductions]
// MPI has no bf16/f16 sum and its own reductions may reorder, so the host backends reduce here:
// for each element, start from rank 0's value and add rank 1's, rank 2's, ... in order, in f32 for
// f32/bf16/f16 (one rounding to bf16/f16 at the end; avg divides the f32 sum by W before it) and
// in wrapping two's-complement arithmetic for i32/i64/u8. The MPI backend's reduce_scatter
// exchanges chunks and runs this on its own chunk; its all_reduce is that reduce_scatter followed
// by an all_gather. So all_reduce == reduce_scatter + all_gather bitwise, and both equal the
// sequential sum in rank order, whatever the world size or message timing.
// `out` may alias a contribution (each element is read before it is written).
void reduce_in_rank_order(const void* const* contributions, int num_ranks, void* out, size_t count,
                          DType dtype, ReduceOp op);

// The same sum in two halves, so that ranks can continue each other's partial sums
// ([Note: hybrid reduction] in hybrid_reduce.h); floating dtypes only. acc[i] = partial[i] (or,
// with partial null, contribution 0's value) + the contributions in order, in f32. partial may
// alias acc.
void accumulate_in_rank_order(const float* partial, const void* const* contributions,
                              int num_contributions, float* acc, size_t count, DType dtype);
// out[i] = acc[i] (times 1/num_ranks for avg, num_ranks the ranks of the whole sum) rounded once
// to dtype: with the accumulation above, bitwise what reduce_in_rank_order gives for all of them.
void finish_in_rank_order(const float* acc, int num_ranks, void* out, size_t count, DType dtype,
                          ReduceOp op);

}  // namespace zt::comm
