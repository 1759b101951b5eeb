// ompi-server as rank 0's child. See ompi_name_server.h.
#include "zerotrain/comm/ompi_name_server.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "zerotrain/core/error.h"

namespace zt::comm {
namespace {

std::string read_whole(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

OmpiNameServer::OmpiNameServer(double timeout_s) {
  namespace fs = std::filesystem;
  const fs::path uri_file =
      fs::temp_directory_path() / ("zerotrain-ompi-server-" + std::to_string(::getpid()) + ".uri");
  fs::remove(uri_file);
  const pid_t parent = ::getpid();
  pid_ = ::fork();
  if (pid_ < 0) throw BackendError("comm", "fork for ompi-server failed");
  if (pid_ == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != parent) std::_Exit(1);
    const std::string file = uri_file.string();
    ::execlp("ompi-server", "ompi-server", "--no-daemonize", "--report-uri", file.c_str(),
             static_cast<char*>(nullptr));
    std::fprintf(stderr, "[comm] cannot run ompi-server (OpenMPI's name server): not on PATH\n");
    std::_Exit(127);
  }
  using clock = std::chrono::steady_clock;
  const auto deadline = clock::now() + std::chrono::duration_cast<clock::duration>(
                                           std::chrono::duration<double>(timeout_s));
  for (;;) {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      fs::remove(uri_file);
      throw BackendError("comm", str("ompi-server (OpenMPI's name server, which ranks started "
                                     "torchrun-style need to form an MPI world) exited with ",
                                     WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status),
                                     " before reporting its address"));
    }
    std::string text = read_whole(uri_file);
    if (!text.empty() && text.back() == '\n') {
      uri_ = text.substr(0, text.size() - 1);
      fs::remove(uri_file);
      return;
    }
    if (clock::now() > deadline) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
      pid_ = -1;
      fs::remove(uri_file);
      throw BackendError("comm", str("ompi-server reported no address within ", timeout_s, " s"));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

OmpiNameServer::~OmpiNameServer() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGTERM);
  ::waitpid(pid_, nullptr, 0);
}

}  // namespace zt::comm
