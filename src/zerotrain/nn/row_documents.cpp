// Document starts and restarted position ids of packed rows; see row_documents.h.
#include "zerotrain/nn/row_documents.h"

#include <vector>

#include "zerotrain/core/error.h"

namespace zt::nn {

RowDocuments row_documents(const Tensor& host_doc_starts, Device device, Stream stream) {
  if (!host_doc_starts.defined() || host_doc_starts.numel() == 0) return {};
  if (!host_doc_starts.device().is_cpu() || host_doc_starts.dim() != 2 ||
      host_doc_starts.dtype() != DType::i32)
    throw ValueError("nn", str("doc_starts ", host_doc_starts.describe(),
                               " must be i32 [rows, seq_len] on the CPU"));
  const int64_t rows = host_doc_starts.size(0), seq = host_doc_starts.size(1);
  const std::vector<int64_t> starts = host_doc_starts.to_ints();
  std::vector<int64_t> positions(starts.size());
  for (int64_t b = 0; b < rows; ++b)
    for (int64_t i = 0; i < seq; ++i) {
      const auto at = static_cast<size_t>(b * seq + i);
      const int64_t start = starts[at];
      // A position either continues the document of the one before it or starts a new one here.
      const bool continues = i > 0 && start == starts[at - 1];
      if (start < 0 || start > i || (!continues && start != i))
        throw ValueError("nn", str("doc_starts[", b, ", ", i, "] = ", start,
                                   ": a position's document starts at the position itself or "
                                   "where the previous position's does"));
      positions[at] = i - start;
    }
  RowDocuments d;
  d.starts = host_doc_starts.contiguous().to(device, stream);
  d.position_ids = Tensor::from_ints(positions, {rows, seq}, DType::i32).to(device, stream);
  return d;
}

}  // namespace zt::nn
