// The host name of every rank of an MPI communicator, gathered once when the world communicator
// is made, so that a collective that times out can say where the missing peer runs ([Note:
// collective timeout] in mpi_wait.h). Internal to the MPI backend; tested under mpirun by
// tests/mpi/test_mpi_collectives.cpp (one host) and across two network namespaces by
// tests/hosts/two_hosts.py.
#pragma once

#include <mpi.h>

#include <string>
#include <vector>

namespace zt::comm::detail {

// Collective over `comm`: result[r] is MPI_Get_processor_name of rank r, bounded by the timeout.
std::vector<std::string> gather_host_names(MPI_Comm comm, double timeout_s);

}  // namespace zt::comm::detail
