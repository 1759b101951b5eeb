// How one row of a training batch is filled from a token file, in the two layouts of the data
// loader (data_loader.h): a packed row is a window of S+1 tokens of the stream, whatever documents
// it crosses; a padded row is one document (example) from its start, cut after S+1 tokens and
// padded to S. Both turn a version 2 file's flags into -100 targets and document starts (See
// [Note: token flags] in token_file.h). Tested in tests/data/test_data_loader_flags.cpp.
#pragma once

#include <cstdint>
#include <vector>

#include "zerotrain/data/token_file.h"

namespace zt::data {

// The loss's ignore index: a target the loss leaves out (labels -100 in transformers).
inline constexpr int32_t kIgnoredTarget = -100;

// Row of S inputs and S targets from tokens [start, start + S + 1). With flags, a target is -100
// unless its token counts as a target and does not start a document, and, when `doc_starts` is
// not null, doc_starts[p] is the last position q <= p of the row whose input starts a document (0
// when none does: the row began inside a document).
void fill_packed_row(const TokenFile& tokens, uint64_t start, int64_t S, int32_t* inputs,
                     int32_t* targets, int32_t* doc_starts);

// Row of one document: tokens [begin, end) cut to S + 1, inputs padded with `pad_id` and targets
// with -100 past its end. Needs a version 2 file.
void fill_padded_row(const TokenFile& tokens, uint64_t begin, uint64_t end, int64_t S,
                     int32_t pad_id, int32_t* inputs, int32_t* targets);

// Where each document of a version 2 file starts, then num_tokens: num_documents + 1 offsets.
std::vector<uint64_t> document_offsets(const TokenFile& tokens);

}  // namespace zt::data
