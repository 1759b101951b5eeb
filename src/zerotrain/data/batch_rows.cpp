// Packed and padded rows of a training batch (see batch_rows.h).
#include "zerotrain/data/batch_rows.h"

#include <algorithm>

namespace zt::data {
namespace {

bool counts(uint8_t flags) {
  return (flags & kTokenCountsAsTarget) && !(flags & kTokenStartsDocument);
}

}  // namespace

void fill_packed_row(const TokenFile& tokens, uint64_t start, int64_t S, int32_t* inputs,
                     int32_t* targets, int32_t* doc_starts) {
  const auto n = static_cast<size_t>(S);
  std::vector<int32_t> window(n + 1);
  tokens.read(start, n + 1, window.data());
  std::copy(window.begin(), window.end() - 1, inputs);
  std::copy(window.begin() + 1, window.end(), targets);
  if (!tokens.has_flags()) return;
  std::vector<uint8_t> flags(n + 1);
  tokens.read_flags(start, n + 1, flags.data());
  int32_t doc_start = 0;
  for (size_t p = 0; p < n; ++p) {
    if (!counts(flags[p + 1])) targets[p] = kIgnoredTarget;
    if (flags[p] & kTokenStartsDocument) doc_start = static_cast<int32_t>(p);
    if (doc_starts) doc_starts[p] = doc_start;
  }
}

void fill_padded_row(const TokenFile& tokens, uint64_t begin, uint64_t end, int64_t S,
                     int32_t pad_id, int32_t* inputs, int32_t* targets) {
  const auto n = static_cast<size_t>(S);
  const auto length = static_cast<size_t>(std::min<uint64_t>(end - begin, n + 1));
  std::vector<int32_t> ids(length);
  std::vector<uint8_t> flags(length);
  tokens.read(begin, length, ids.data());
  tokens.read_flags(begin, length, flags.data());
  std::fill(inputs, inputs + n, pad_id);
  std::fill(targets, targets + n, kIgnoredTarget);
  for (size_t p = 0; p < std::min(length, n); ++p)
    inputs[p] = ids[p];
  for (size_t p = 0; p + 1 < length; ++p)
    targets[p] = counts(flags[p + 1]) ? ids[p + 1] : kIgnoredTarget;
}

std::vector<uint64_t> document_offsets(const TokenFile& tokens) {
  if (!tokens.has_flags())
    throw TokenFileError(str(tokens.path().string(), ": version ", tokens.header().version,
                             " marks no documents; one example per row needs a version 2 file"));
  std::vector<uint64_t> offsets;
  offsets.reserve(tokens.header().num_documents + 1);
  for (uint64_t i = 0; i < tokens.size(); ++i)
    if (tokens.flags(i) & kTokenStartsDocument) offsets.push_back(i);
  offsets.push_back(tokens.size());
  return offsets;
}

}  // namespace zt::data
