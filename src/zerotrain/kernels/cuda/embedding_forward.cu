// CUDA embedding lookup: one block per token copies its table row in the widest word (up to 16
// bytes) that the row size and pointers allow. An out-of-range id zero-fills its row and, when
// checked, lowers a device-side "first bad token" word (atomicMin) that the host reads after a
// stream sync. Tested by tests/kernels/test_embedding_cuda.cpp.
#include <algorithm>
#include <cstdint>

#include "zerotrain/core/cuda/cuda_check.h"
#include "zerotrain/kernels/cuda/embedding.h"
#include "zerotrain/kernels/cuda/float_packs.cuh"

namespace zt::kernels::cuda {

namespace {

constexpr unsigned long long kNoBadToken = ~0ULL;

// ids: [n] I; table: [V, words] Word; out: [n, words] Word; bad: null (unchecked) or one word
// holding the smallest bad token index so far.
template <typename I, typename Word>
__global__ void __launch_bounds__(256)
    embedding_fwd_kernel(const I* __restrict__ ids, const Word* __restrict__ table,
                         Word* __restrict__ out, long long n, long long V, long long words,
                         unsigned long long* bad) {
  for (long long t = blockIdx.x; t < n; t += gridDim.x) {
    const long long id = static_cast<long long>(ids[t]);
    const bool ok = id >= 0 && id < V;
    if (!ok && bad != nullptr && threadIdx.x == 0)
      atomicMin(bad, static_cast<unsigned long long>(t));
    const Word* src = table + (ok ? id : 0) * words;
    Word* dst = out + t * words;
    for (long long k = threadIdx.x; k < words; k += blockDim.x)
      dst[k] = ok ? src[k] : Word{};
  }
}

template <typename Word>
void launch(const Tensor& ids, const Tensor& table, Tensor& out, unsigned long long* bad,
            Stream stream) {
  const long long n = ids.size(0), V = table.size(0);
  const long long words =
      static_cast<long long>(table.size(1) * table.element_size() / sizeof(Word));
  const int threads = std::max(32, std::min(256, round_up(words, 32)));
  const unsigned grid = static_cast<unsigned>(std::min<long long>(n, 1LL << 30));
  const auto* src = static_cast<const Word*>(table.data());
  auto* dst = static_cast<Word*>(out.data());
  if (ids.dtype() == DType::i32)
    embedding_fwd_kernel<int, Word><<<grid, threads, 0, to_cuda(stream)>>>(
        static_cast<const int*>(ids.data()), src, dst, n, V, words, bad);
  else
    embedding_fwd_kernel<long long, Word><<<grid, threads, 0, to_cuda(stream)>>>(
        static_cast<const long long*>(ids.data()), src, dst, n, V, words, bad);
  ZT_CUDA_CHECK_LAUNCH();
}

}  // namespace

int64_t embedding_forward(const Tensor& ids, const Tensor& table, Tensor& out, bool check_ids,
                          Stream stream) {
  const long long n = ids.size(0);
  if (n == 0) return -1;
  CudaDeviceGuard guard(ids.device());
  Tensor flag;  // i64 [1]: the first bad token, kNoBadToken when none
  unsigned long long* bad = nullptr;
  if (check_ids) {
    flag = Tensor::empty({1}, DType::i64, ids.device(), stream);
    bad = static_cast<unsigned long long*>(flag.data());
    ZT_CUDA_CHECK(cudaMemsetAsync(bad, 0xff, sizeof(*bad), to_cuda(stream)));
  }
  const size_t row_bytes = static_cast<size_t>(table.size(1)) * table.element_size();
  auto fits = [&](size_t w) {
    return row_bytes % w == 0 && is_aligned(table.data(), w) && is_aligned(out.data(), w);
  };
  if (fits(16))
    launch<uint4>(ids, table, out, bad, stream);
  else if (fits(8))
    launch<uint2>(ids, table, out, bad, stream);
  else if (fits(4))
    launch<unsigned>(ids, table, out, bad, stream);
  else
    launch<unsigned short>(ids, table, out, bad, stream);
  if (!check_ids) return -1;
  unsigned long long first = kNoBadToken;
  ZT_CUDA_CHECK(
      cudaMemcpyAsync(&first, bad, sizeof(first), cudaMemcpyDeviceToHost, to_cuda(stream)));
  ZT_CUDA_CHECK(cudaStreamSynchronize(to_cuda(stream)));
  return first == kNoBadToken ? -1 : static_cast<int64_t>(first);
}

}  // namespace zt::kernels::cuda
