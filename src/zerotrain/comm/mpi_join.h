// One MPI world for ranks started torchrun-style (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT; no
// mpirun): what ProcessGroup::host() builds for CPU collectives under `zerotrain launch` without
// --mpi, torchrun, or by hand on several hosts. Tested by tests/hosts/two_hosts.py (two hosts)
// and the ctest train_torchrun_style_cpu (one host, bitwise against mpirun).
#pragma once

#include <mpi.h>

#include <memory>

#include "zerotrain/comm/mpi_communicator.h"
#include "zerotrain/comm/ompi_name_server.h"
#include "zerotrain/comm/process_env.h"

namespace zt::comm {

// [Note: joining torchrun-style ranks]
// Each rank starts as an MPI singleton (its own one-process job). OpenMPI 4.1 connects separate
// jobs only through a name server, so:
//   1. rank 0 starts `ompi-server` (OmpiNameServer) and hands its address to every rank through
//      the TCP rendezvous on MASTER_ADDR:MASTER_PORT (tcp_rendezvous.h);
//   2. every rank initializes MPI with OMPI_MCA_pmix_server_uri set to that address;
//   3. rank 0 opens a port; the job grows one rank at a time, in RANK order: rank 0 publishes the
//      port under "zerotrain@MASTER_ADDR:MASTER_PORT#k" when k ranks have joined, rank k looks
//      that name up and connects, the ranks already joined accept (collectively), and the two
//      merge (MPI_Intercomm_merge). One connect at a time: OpenMPI 4.1 mispairs concurrent
//      connects to one port with its accepts (a rank then waited in MPI_Comm_connect for good,
//      about 1 start in 5 of 4 ranks);
//   4. a split keyed by RANK puts the merged ranks in RANK order.
// The collectives over it are the MPI backend's, so a run equals the same run under mpirun,
// bitwise. MPI's connect/accept block without a deadline: a watchdog ends the process with one line
// when the world is not complete within the timeout. MPI_Abort (a collective timeout) ends only
// the calling rank here; the others end at their own deadline.
struct JoinedWorld {
  std::unique_ptr<OmpiNameServer> name_server;  // rank 0 only; outlives MPI
  std::unique_ptr<MpiRuntime> mpi;
  std::unique_ptr<Communicator> communicator;
};

// Collective over every rank of `env` (torchrun-style, world_size > 1, MASTER_ADDR and
// MASTER_PORT set). MPI must not be initialized yet.
JoinedWorld join_torchrun_style_ranks(const ProcessEnv& env, double timeout_s);

}  // namespace zt::comm
