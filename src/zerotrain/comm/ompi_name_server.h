// OpenMPI's name server (`ompi-server`) as a child process of rank 0, for ranks started
// torchrun-style that join one MPI world (mpi_join.h). Tested across processes and hosts by
// tests/hosts/two_hosts.py and on one host by the ctest train_torchrun_style_cpu.
#pragma once

#include <sys/types.h>

#include <string>

namespace zt::comm {

class OmpiNameServer {
 public:
  // Starts `ompi-server` (found on PATH) and waits until it reports its address, at most
  // timeout_s. The server gets SIGTERM when this process dies. Throws BackendError naming the
  // failure (not installed, exited, no address in time).
  explicit OmpiNameServer(double timeout_s);
  // SIGTERM, then wait for it.
  ~OmpiNameServer();
  OmpiNameServer(const OmpiNameServer&) = delete;
  OmpiNameServer& operator=(const OmpiNameServer&) = delete;

  // What OMPI_MCA_pmix_server_uri takes: "JOB.0;tcp://ADDR:PORT;...".
  const std::string& uri() const { return uri_; }

 private:
  pid_t pid_ = -1;
  std::string uri_;
};

}  // namespace zt::comm
