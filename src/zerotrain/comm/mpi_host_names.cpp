// Every rank's host name through one bounded all-gather. See mpi_host_names.h.
#include "zerotrain/comm/mpi_host_names.h"

#include <cstring>

#include "zerotrain/comm/communicator.h"
#include "zerotrain/comm/mpi_wait.h"
#include "zerotrain/core/error.h"

namespace zt::comm::detail {

std::vector<std::string> gather_host_names(MPI_Comm comm, double timeout_s) {
  int rank = 0, size = 1;
  ZT_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  ZT_MPI_CHECK(MPI_Comm_size(comm, &size));
  std::vector<char> mine(MPI_MAX_PROCESSOR_NAME, '\0');
  int length = 0;
  ZT_MPI_CHECK(MPI_Get_processor_name(mine.data(), &length));
  std::vector<char> all(static_cast<size_t>(size) * MPI_MAX_PROCESSOR_NAME, '\0');  // [size, max]
  PendingRequests pending;
  MPI_Request req;
  ZT_MPI_CHECK(MPI_Iallgather(mine.data(), MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all.data(),
                              MPI_MAX_PROCESSOR_NAME, MPI_CHAR, comm, &req));
  pending.add(req, -1);
  std::vector<int> ranks(static_cast<size_t>(size));
  for (int r = 0; r < size; ++r)
    ranks[static_cast<size_t>(r)] = r;
  wait_all(pending, {str("exchange of host names on ranks ", describe_ranks(ranks)), rank,
                     timeout_s, nullptr});
  std::vector<std::string> hosts;
  for (int r = 0; r < size; ++r) {
    const char* name = all.data() + static_cast<size_t>(r) * MPI_MAX_PROCESSOR_NAME;
    hosts.emplace_back(name, strnlen(name, MPI_MAX_PROCESSOR_NAME));
  }
  return hosts;
}

}  // namespace zt::comm::detail
