// agree_on_checks (agreed_checks.h).
#include "zerotrain/comm/agreed_checks.h"

#include <cstdio>
#include <cstdlib>
#include <exception>

#include "zerotrain/comm/tensor_collectives.h"

namespace zt::comm {

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
  const std::vector<uint64_t> words = all_gather_words(*comm, text.empty() ? 0 : error_word(text),
                                                       device, Stream::default_for(device));
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
