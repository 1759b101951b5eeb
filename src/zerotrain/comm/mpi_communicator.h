// The MPI (OpenMPI) backend on host buffers, and the RAII owner of MPI_Init / MPI_Finalize.
// Reductions follow [Note: deterministic reductions]; a collective that does not finish in the
// timeout aborts the job ([Note: collective timeout]). Tested by tests/mpi/ under mpirun.
#pragma once

#include <mpi.h>

#include <memory>

#include "zerotrain/comm/communicator.h"

namespace zt::comm {

// Initializes MPI (thread level serialized) unless it already is, and finalizes it on destruction
// if this object initialized it. One per process, held by ProcessGroup.
class MpiRuntime {
 public:
  MpiRuntime();
  ~MpiRuntime();
  MpiRuntime(const MpiRuntime&) = delete;
  MpiRuntime& operator=(const MpiRuntime&) = delete;

  int world_rank() const;
  int world_size() const;

 private:
  bool owns_ = false;
};

// A communicator over (a duplicate of) MPI_COMM_WORLD. MPI must be initialized.
std::unique_ptr<Communicator> make_mpi_world_communicator(double timeout_s);

// A communicator over `job`, a communicator of every rank of the job in rank order (the world of
// ranks started torchrun-style, mpi_join.h); takes ownership of it. Collective.
std::unique_ptr<Communicator> make_mpi_job_communicator(MPI_Comm job, double timeout_s);

}  // namespace zt::comm
