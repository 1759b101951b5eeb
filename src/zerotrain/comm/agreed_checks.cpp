// agree_on_checks (agreed_checks.h).
#include "zerotrain/comm/agreed_checks.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>

#include "zerotrain/comm/tensor_collectives.h"
#include "zerotrain/core/tensor.h"

namespace zt::comm {

namespace {

// One 64-bit word per rank, in rank order.
std::vector<uint64_t> gather_words(Communicator& comm, uint64_t word, Device device) {
  const Stream stream = Stream::default_for(device);
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

}  // namespace

uint64_t error_word(const std::string& text) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (unsigned char ch : text)
    h = (h ^ ch) * 1099511628211ull;
  return h | 1;
}

ErrorLine error_line(const std::vector<uint64_t>& words, int rank) {
  const uint64_t mine = words[static_cast<size_t>(rank)];
  if (mine == 0) return {};
  bool shared_by_all = true;
  for (uint64_t w : words)
    shared_by_all = shared_by_all && w == mine;
  if (!shared_by_all) return {true, true};  // every rank that met it, each with its rank
  return {rank == 0, false};                // once, by the lowest rank
}

void agree_on_checks(Communicator* comm, Device device, const std::function<void()>& checks) {
  if (!comm || comm->size() == 1) return checks();
  std::string text;
  try {
    checks();
  } catch (const std::exception& e) {
    text =
        dynamic_cast<const Error*>(&e) ? e.what() : str("[zerotrain] unexpected error: ", e.what());
  }
  const std::vector<uint64_t> words =
      gather_words(*comm, text.empty() ? 0 : error_word(text), device);
  bool anyone_failed = false;
  for (uint64_t w : words)
    anyone_failed = anyone_failed || w != 0;
  if (!anyone_failed) return;
  const ErrorLine line = error_line(words, comm->rank());
  if (line.print) {
    const bool prefixed = std::getenv(kRankPrefixEnv) != nullptr;
    const std::string rank = line.with_rank && !prefixed ? str("[rank ", comm->rank(), "] ") : "";
    std::fprintf(stderr, "%s%s\n", rank.c_str(), text.c_str());
    std::fflush(stderr);
  }
  throw ErrorReported();
}

}  // namespace zt::comm
