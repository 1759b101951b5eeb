// Packed rows: where each position's document starts and the position ids that restart there, as
// every block of a step sees them (StepContext::documents).
//
// [Note: packed documents] A row of a batch may hold several short documents one after another
// (data::Batch::doc_starts). Then nothing may cross a boundary: attention bounds each query's keys
// below by its document's start (kernels::AttentionOptions::doc_starts, with the sliding window
// where a model has one), RoPE rotates by the position inside the document and GPT-2 looks up its
// learned position embedding there (position id = i - doc_starts[i]), so every document of a
// packed row gives the losses and gradients it would give alone in a row of its own, up to the
// rounding of sums grouped differently. Empty tensors mean every row is one stream: every kernel
// then runs exactly as before packing existed (bitwise). Tested by tests/nn/test_packed_rows.cpp.
#pragma once

#include "zerotrain/core/stream.h"
#include "zerotrain/core/tensor.h"

namespace zt::nn {

struct RowDocuments {
  Tensor starts;        // i32 [B, S] on the activations' device, or empty: each row one stream
  Tensor position_ids;  // i32 [B, S] on that device: position - starts; empty with starts
  bool packed() const { return starts.defined(); }
};

// From a batch's doc_starts (i32 [B, S] on the CPU, or empty): checks that every start lies in
// [0, position] and does not decrease inside a document (ValueError naming the position), computes
// the position ids, and copies both to `device`.
RowDocuments row_documents(const Tensor& host_doc_starts, Device device, Stream stream = {});

}  // namespace zt::nn
