// One line per error across ranks: checks every rank runs, then agreed on. Tested by
// tests/comm/test_agreed_checks.cpp (one process, a fake world) and tests/cli/rank_errors.py
// (4 CPU ranks through `zerotrain launch` and mpirun).
//
// [Note: one line per error across ranks]
// A refusal every rank reaches (a bad ds_config, model, token file or checkpoint) used to be
// printed once per rank. The set-up checks that hold no collective now run inside
// agree_on_checks: every rank runs them, then one all-gather of a word per rank (0: passed, else
// a hash of the error's text) tells every rank who failed with what. A refusal every rank reaches
// (the same text everywhere) is printed once, by rank 0; an error only some ranks meet (some rank
// passed, or the texts differ) is printed by each rank that met it, starting "[rank r] " unless a
// launcher already prefixes the rank's lines (kRankPrefixEnv). Then every rank throws
// ErrorReported, which the command exits on (code 1) without a line of its own. Errors outside
// these checks (a step's, a collective's) are not agreed on: the rank that meets one prints it.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "zerotrain/comm/communicator.h"
#include "zerotrain/comm/launcher.h"
#include "zerotrain/core/device.h"
#include "zerotrain/core/error.h"

namespace zt::comm {

// A failure of the agreed checks, already printed by the rank that reports it.
class ErrorReported : public Error {
 public:
  ErrorReported() : Error("comm", "an error already reported") {}
};

// Runs `checks` (no collective inside) on this rank and agrees with the other ranks of `comm`
// on the outcome (collective; the buffers live on `device`). Returns when every rank passed;
// otherwise prints as [Note: one line per error across ranks] says and throws ErrorReported.
// Without a communicator (or on one rank) it only runs `checks`, whose errors propagate.
void agree_on_checks(Communicator* comm, Device device, const std::function<void()>& checks);

// The decision of agree_on_checks for one rank: whether it prints its error, and with its rank.
// `words`: the gathered words (0 = passed, else the error's hash), in rank order.
struct ErrorLine {
  bool print = false;
  bool with_rank = false;
};
ErrorLine error_line(const std::vector<uint64_t>& words, int rank);

// The word a rank contributes for an error with this text (never 0).
uint64_t error_word(const std::string& text);

}  // namespace zt::comm
