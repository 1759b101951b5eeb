// cuDNN fused flash attention: the forward and backward SDPA graphs, their plan cache, and the
// calls that run them on our tensors. Tested by tests/kernels/test_attention_cudnn.cpp.
#include "zerotrain/kernels/cuda/cudnn_attention.h"

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <string_view>
#include <tuple>
#include <vector>

#include "zerotrain/core/cuda/cuda_check.h"
#include "zerotrain/kernels/cuda/cudnn_graph.h"

namespace zt::kernels::cuda {

// [Note: cuDNN attention graphs]
// cuDNN 9.x recognises scaled-dot-product attention as a graph of primitive operations and runs it
// as one fused kernel (the composite graphs cudnn-frontend draws for 9.x; the single SDPA operation
// descriptors of newer releases are not used, so that the 9.14 runtime of the GPU machine runs
// these graphs). Shapes are cuDNN's (b, h, s, d) over our [B, S, H, D] memory: strides
// (S*H*D, D, H*D, 1); K (and V in the backward) enter transposed, (b, h, d, s) with strides
// (S*H*D, D, 1, H*D). Scores and probabilities are virtual: they never reach memory.
//   forward:  S = Q K^T; S *= scale; causal mask (row index >= column index, else the lowest
//             float); M = rowmax S; E = exp(S - M); Z = rowsum E; Stats = M + log Z (the lse);
//             P = E / Z (in the io dtype); O = P V.
//   backward: Dsum = rowsum(dO * O) (a f32 buffer of ours); S = scale Q K^T - Stats, masked;
//             P = exp S; dV = P^T dO; dS = scale P (dO V^T - Dsum); dK = dS^T Q; dQ = dS K.
//             With grouped heads, dK and dV are made per query head and summed over each group
//             by a reduction in the graph.
// Determinism: the backward cudnn-frontend draws by default accumulates dQ in a f32 buffer of its
// workspace (a non-virtual f32 dQ accumulator, then an identity to dQ), with atomics: not bitwise
// repeatable. For its deterministic backward on Hopper (is_deterministic_algorithm) it draws dQ
// straight from the dS K matmul instead ("use_dp_workspace" in
// include/cudnn_frontend/node/scaled_dot_product_flash_attention.h), which makes cuDNN pick the
// backward that keeps dP in its workspace (about b * h * s * s * 2 bytes) rather than accumulating
// dQ. This graph is that one; engines cuDNN notes as NONDETERMINISTIC are skipped as well, and
// tests/kernels/test_attention_cudnn.cpp runs the backward twice and compares bitwise.
// Up to cuDNN 9.15.0 the backward needs a padding mask when S is not a multiple of 128 (the
// workaround cudnn-frontend applies up to 9.15.0): per-batch lengths, all S, bound the matmuls and
// mask the scores.

namespace {

using cudnn::ExecutionPlan;
using cudnn::GraphBuilder;
using cudnn::TensorSpec;

// Ids of the tensors the caller supplies (virtual tensors take ids from 1000 on).
enum TensorId : int64_t {
  kQ = 1,
  kK,
  kV,
  kO,
  kStats,
  kScale,
  kMaskedScore,
  kDO,
  kDQ,
  kDK,
  kDV,
  kRowDots,
  kOne,
  kSeqLenQ,
  kSeqLenKV,
};

// Everything a plan depends on.
struct PlanKey {
  int device = 0;
  int64_t B = 0, S = 0, Hq = 0, Hkv = 0, D = 0;
  DType dtype = DType::bf16;
  float scale = 0.0f;
  AttentionPass pass = AttentionPass::forward;
  auto tie() const { return std::tie(device, B, S, Hq, Hkv, D, dtype, scale, pass); }
  bool operator<(const PlanKey& o) const { return tie() < o.tie(); }
};

PlanKey key_of(const Tensor& q, const Tensor& k, const AttentionOptions& opt, AttentionPass pass) {
  return {q.device().index, q.size(0), q.size(1), q.size(2), k.size(2),
          q.size(3),        q.dtype(), opt.scale, pass};
}

const char* pass_name(AttentionPass pass) {
  return pass == AttentionPass::forward ? "attention forward" : "attention backward";
}

// A cached build: the plan, or why there is none.
struct PlanEntry {
  std::unique_ptr<ExecutionPlan> plan;
  std::string failure;
  bool padded = false;  // the backward's padding-mask workaround: kSeqLenQ/kSeqLenKV are inputs
  Tensor seq_lens;      // i32 [B], every entry S, on the device (padded plans only)
};

// Our [B, S, H, D] memory as cuDNN's (b, h, s, d).
TensorSpec bhsd(int64_t B, int64_t H, int64_t S, int64_t D, cudnnDataType_t type) {
  return {{B, H, S, D}, {S * H * D, D, H * D, 1}, type};
}

// The same memory transposed: (b, h, d, s).
TensorSpec bhds(int64_t B, int64_t H, int64_t S, int64_t D, cudnnDataType_t type) {
  return {{B, H, D, S}, {S * H * D, D, 1, H * D}, type};
}

// One value per query row, (b, h, s, 1): our lse [B, H, S].
TensorSpec rows(int64_t B, int64_t H, int64_t S, cudnnDataType_t type) {
  return {{B, H, S, 1}, {H * S, S, 1, 1}, type};
}

std::vector<int64_t> score_dims(const PlanKey& p) {
  return {p.B, p.Hq, p.S, p.S};
}
std::vector<int64_t> score_strides(const PlanKey& p) {
  return {p.Hq * p.S * p.S, p.S * p.S, p.S, 1};
}
// Scores transposed in their last two dims (keys as rows).
std::vector<int64_t> score_strides_t(const PlanKey& p) {
  return {p.Hq * p.S * p.S, p.S * p.S, 1, p.S};
}

cudnnDataType_t io_type(DType t) {
  return t == DType::bf16 ? CUDNN_DATA_BFLOAT16 : CUDNN_DATA_HALF;
}

// A f32 virtual tensor shaped like the scores.
int64_t scores_like(GraphBuilder& g, const PlanKey& p, const char* name) {
  return g.virtual_tensor(score_dims(p), score_strides(p), CUDNN_DATA_FLOAT, name);
}

// `x` where `keep` holds, the lowest float elsewhere.
int64_t select_or_lowest(GraphBuilder& g, const PlanKey& p, int64_t x, int64_t keep,
                         const char* name) {
  const int64_t y = scores_like(g, p, name);
  g.pointwise(CUDNN_POINTWISE_BINARY_SELECT, x, kMaskedScore, keep, y, CUDNN_DATA_FLOAT, name);
  return y;
}

// Row and column indices of the scores (int32 virtual tensors).
std::pair<int64_t, int64_t> score_indices(GraphBuilder& g, const PlanKey& p, int64_t x,
                                          const char* row_name, const char* col_name) {
  const int64_t row = g.virtual_tensor(score_dims(p), score_strides(p), CUDNN_DATA_INT32, row_name);
  g.pointwise(CUDNN_POINTWISE_GEN_INDEX, x, 0, 0, row, CUDNN_DATA_INT32, row_name, 2);
  const int64_t col = g.virtual_tensor(score_dims(p), score_strides(p), CUDNN_DATA_INT32, col_name);
  g.pointwise(CUDNN_POINTWISE_GEN_INDEX, x, 0, 0, col, CUDNN_DATA_INT32, col_name, 3);
  return {row, col};
}

// Top-left causal mask: query i keeps key j <= i.
int64_t causal_mask(GraphBuilder& g, const PlanKey& p, int64_t x) {
  const auto [row, col] = score_indices(g, p, x, "causal row index", "causal column index");
  const int64_t keep =
      g.virtual_tensor(score_dims(p), score_strides(p), CUDNN_DATA_BOOLEAN, "causal keep");
  g.pointwise(CUDNN_POINTWISE_CMP_GE, row, col, 0, keep, CUDNN_DATA_BOOLEAN, "causal keep");
  return select_or_lowest(g, p, x, keep, "causal masked scores");
}

// The backward's padding-mask workaround: rows below kSeqLenQ and columns below kSeqLenKV (all S).
int64_t padding_mask(GraphBuilder& g, const PlanKey& p, int64_t x) {
  const auto [row, col] = score_indices(g, p, x, "padding row index", "padding column index");
  const auto flag = [&](const char* name) {
    return g.virtual_tensor(score_dims(p), score_strides(p), CUDNN_DATA_BOOLEAN, name);
  };
  const int64_t row_in = flag("row inside");
  g.pointwise(CUDNN_POINTWISE_CMP_LT, row, kSeqLenQ, 0, row_in, CUDNN_DATA_BOOLEAN, "row inside");
  const int64_t col_in = flag("column inside");
  g.pointwise(CUDNN_POINTWISE_CMP_LT, col, kSeqLenKV, 0, col_in, CUDNN_DATA_BOOLEAN,
              "column inside");
  const int64_t keep = flag("padding keep");
  g.pointwise(CUDNN_POINTWISE_LOGICAL_AND, row_in, col_in, 0, keep, CUDNN_DATA_BOOLEAN,
              "padding keep");
  return select_or_lowest(g, p, x, keep, "padding masked scores");
}

ExecutionPlan build_forward(cudnn::DeviceHandle& h, const PlanKey& p) {
  GraphBuilder g(h);
  const cudnnDataType_t io = io_type(p.dtype), f32 = CUDNN_DATA_FLOAT;
  g.tensor(kQ, bhsd(p.B, p.Hq, p.S, p.D, io), "Q");
  g.tensor(kK, bhds(p.B, p.Hkv, p.S, p.D, io), "K^T");
  g.tensor(kV, bhsd(p.B, p.Hkv, p.S, p.D, io), "V");
  g.tensor(kO, bhsd(p.B, p.Hq, p.S, p.D, io), "O");
  g.tensor(kStats, rows(p.B, p.Hq, p.S, f32), "Stats");
  g.scalar(kScale, "scale");
  g.scalar(kMaskedScore, "masked score");

  const int64_t s = scores_like(g, p, "Q K^T");
  g.matmul(kQ, kK, s, "Q K^T");
  const int64_t scaled = scores_like(g, p, "scaled scores");
  g.pointwise(CUDNN_POINTWISE_MUL, s, kScale, 0, scaled, f32, "scale scores");
  const int64_t masked = causal_mask(g, p, scaled);

  const TensorSpec row = rows(p.B, p.Hq, p.S, f32);
  const int64_t row_max = g.virtual_tensor(row.dims, row.strides, f32, "row max");
  g.reduction(CUDNN_REDUCE_TENSOR_MAX, masked, row_max, "row max");
  const int64_t centred = scores_like(g, p, "scores - row max");
  g.pointwise(CUDNN_POINTWISE_SUB, masked, row_max, 0, centred, f32, "scores - row max");
  const int64_t e = scores_like(g, p, "exp");
  g.pointwise(CUDNN_POINTWISE_EXP, centred, 0, 0, e, f32, "exp");
  const int64_t z = g.virtual_tensor(row.dims, row.strides, f32, "row sum");
  g.reduction(CUDNN_REDUCE_TENSOR_ADD, e, z, "row sum");
  const int64_t log_z = g.virtual_tensor(row.dims, row.strides, f32, "log row sum");
  g.pointwise(CUDNN_POINTWISE_LOG, z, 0, 0, log_z, f32, "log row sum");
  g.pointwise(CUDNN_POINTWISE_ADD, row_max, log_z, 0, kStats, f32, "stats");
  const int64_t prob = g.virtual_tensor(score_dims(p), score_strides(p), io, "probabilities");
  g.pointwise(CUDNN_POINTWISE_DIV, e, z, 0, prob, f32, "probabilities");
  g.matmul(prob, kV, kO, "P V");
  return g.build_plan(false, pass_name(p.pass));
}

// dK or dV from the transposed scores `a_t` (io dtype) and `b`: written straight to `out` when
// every query head has its own kv head, else made per query head and summed over each group.
void key_side_gradient(GraphBuilder& g, const PlanKey& p, int64_t a_t, int64_t b, int64_t out,
                       int64_t m_override, int64_t k_override, const char* name) {
  if (p.Hq == p.Hkv) {
    g.matmul(a_t, b, out, name, m_override, 0, k_override);
    return;
  }
  const int64_t full = g.virtual_tensor(
      {p.B, p.Hq, p.S, p.D}, {p.Hq * p.S * p.D, p.S * p.D, p.D, 1}, io_type(p.dtype), name);
  g.matmul(a_t, b, full, name, m_override, 0, k_override);
  g.reduction(CUDNN_REDUCE_TENSOR_ADD, full, out, "sum over the query heads of a group");
}

ExecutionPlan build_backward(cudnn::DeviceHandle& h, const PlanKey& p, bool padded) {
  GraphBuilder g(h);
  const cudnnDataType_t io = io_type(p.dtype), f32 = CUDNN_DATA_FLOAT;
  g.tensor(kQ, bhsd(p.B, p.Hq, p.S, p.D, io), "Q");
  g.tensor(kK, bhds(p.B, p.Hkv, p.S, p.D, io), "K^T");
  g.tensor(kV, bhds(p.B, p.Hkv, p.S, p.D, io), "V^T");
  g.tensor(kO, bhsd(p.B, p.Hq, p.S, p.D, io), "O");
  g.tensor(kDO, bhsd(p.B, p.Hq, p.S, p.D, io), "dO");
  g.tensor(kStats, rows(p.B, p.Hq, p.S, f32), "Stats");
  g.tensor(kDQ, bhsd(p.B, p.Hq, p.S, p.D, io), "dQ");
  g.tensor(kDK, bhsd(p.B, p.Hkv, p.S, p.D, io), "dK");
  g.tensor(kDV, bhsd(p.B, p.Hkv, p.S, p.D, io), "dV");
  g.tensor(kRowDots, rows(p.B, p.Hq, p.S, f32), "rowsum(dO * O)");
  g.scalar(kScale, "scale");
  g.scalar(kMaskedScore, "masked score");
  g.scalar(kOne, "one");
  int64_t seq_q = 0, seq_kv = 0;
  if (padded) {
    const TensorSpec lens{{p.B, 1, 1, 1}, {1, 1, 1, 1}, CUDNN_DATA_INT32};
    seq_q = g.tensor(kSeqLenQ, lens, "sequence lengths of q");
    seq_kv = g.tensor(kSeqLenKV, lens, "sequence lengths of kv");
  }

  const TensorSpec dout_f32 = bhsd(p.B, p.Hq, p.S, p.D, f32);
  const int64_t dout_o = g.virtual_tensor(dout_f32.dims, dout_f32.strides, f32, "dO * O");
  g.pointwise(CUDNN_POINTWISE_MUL, kDO, kO, 0, dout_o, f32, "dO * O");
  const TensorSpec row = rows(p.B, p.Hq, p.S, f32);
  const int64_t dots = g.virtual_tensor(row.dims, row.strides, f32, "row dots");
  g.reduction(CUDNN_REDUCE_TENSOR_ADD, dout_o, dots, "row dots");
  g.pointwise(CUDNN_POINTWISE_MUL, dots, kOne, 0, kRowDots, f32, "row dots out");

  const int64_t s = scores_like(g, p, "Q K^T");
  g.matmul(kQ, kK, s, "Q K^T", seq_q, seq_kv);
  const int64_t scaled = scores_like(g, p, "scaled scores");
  g.pointwise(CUDNN_POINTWISE_MUL, s, kScale, 0, scaled, f32, "scale scores");
  int64_t centred = scores_like(g, p, "scores - stats");
  g.pointwise(CUDNN_POINTWISE_SUB, scaled, kStats, 0, centred, f32, "scores - stats");
  if (padded) centred = padding_mask(g, p, centred);
  const int64_t masked = causal_mask(g, p, centred);
  const int64_t prob = scores_like(g, p, "probabilities");
  g.pointwise(CUDNN_POINTWISE_EXP, masked, 0, 0, prob, f32, "probabilities");

  const int64_t prob_t = g.virtual_tensor(score_dims(p), score_strides_t(p), io, "P^T");
  g.reshape(prob, prob_t, "P^T");
  key_side_gradient(g, p, prob_t, kDO, kDV, seq_kv, seq_q, "P^T dO");

  const int64_t dp = scores_like(g, p, "dO V^T");
  g.matmul(kDO, kV, dp, "dO V^T", seq_q, seq_kv);
  const int64_t dp_centred = scores_like(g, p, "dP - row dots");
  g.pointwise(CUDNN_POINTWISE_SUB, dp, kRowDots, 0, dp_centred, f32, "dP - row dots");
  const int64_t ds_unscaled = scores_like(g, p, "P (dP - row dots)");
  g.pointwise(CUDNN_POINTWISE_MUL, dp_centred, prob, 0, ds_unscaled, f32, "P (dP - row dots)");
  const int64_t ds = scores_like(g, p, "dS");
  g.pointwise(CUDNN_POINTWISE_MUL, ds_unscaled, kScale, 0, ds, f32, "dS");

  const int64_t ds_t = g.virtual_tensor(score_dims(p), score_strides_t(p), io, "dS^T");
  g.reshape(ds, ds_t, "dS^T");
  key_side_gradient(g, p, ds_t, kQ, kDK, seq_kv, seq_q, "dS^T Q");

  // K back in its own orientation; f32 as cudnn-frontend leaves this virtual tensor's type.
  const TensorSpec k_rows = bhsd(p.B, p.Hkv, p.S, p.D, f32);
  const int64_t k = g.virtual_tensor(k_rows.dims, k_rows.strides, f32, "K");
  g.reshape(kK, k, "K");
  g.matmul(ds, k, kDQ, "dS K", seq_q, 0, seq_kv);
  return g.build_plan(true, pass_name(p.pass));
}

// The backward's padding-mask workaround: up to cuDNN 9.15.0, when S is not a multiple of 128.
bool needs_padding_workaround(const PlanKey& p) {
  return p.pass == AttentionPass::backward && p.S % 128 != 0 && cudnn::runtime_version() <= 91500;
}

struct PlanCache {
  std::mutex mu;
  std::map<PlanKey, std::unique_ptr<PlanEntry>> entries;
};

PlanCache& plan_cache() {
  static PlanCache cache;
  return cache;
}

// The entry of `key`, built on first use. Entries are never removed, so the reference stays valid.
PlanEntry& entry_for(const PlanKey& key) {
  PlanCache& cache = plan_cache();
  std::lock_guard lock(cache.mu);
  auto& slot = cache.entries[key];
  if (slot) return *slot;
  slot = std::make_unique<PlanEntry>();
  PlanEntry& e = *slot;
  const Device dev = Device::cuda(key.device);
  try {
    CudaDeviceGuard guard(dev);
    cudnn::DeviceHandle& h = cudnn::handle_for(dev);
    e.padded = needs_padding_workaround(key);
    e.plan = std::make_unique<ExecutionPlan>(key.pass == AttentionPass::forward
                                                 ? build_forward(h, key)
                                                 : build_backward(h, key, e.padded));
    if (e.padded)
      e.seq_lens = Tensor::from_ints(std::vector<int64_t>(static_cast<size_t>(key.B), key.S),
                                     {key.B}, DType::i32, dev);
  } catch (const Error& err) {
    e.plan.reset();
    e.failure = err.what();
  }
  return e;
}

// The plan of this case; throws with the build's failure.
const PlanEntry& plan_for(const Tensor& q, const Tensor& k, const AttentionOptions& opt,
                          AttentionPass pass) {
  const PlanEntry& e = entry_for(key_of(q, k, opt, pass));
  if (!e.plan)
    throw BackendError(pass == AttentionPass::forward ? "attention_forward" : "attention_backward",
                       str("cuDNN cannot run q ", q.describe(), ": ", e.failure));
  return e;
}

// Workspace of `bytes` on `stream` (an empty tensor for none).
Tensor workspace(const Tensor& like, int64_t bytes, Stream stream) {
  if (bytes <= 0) return {};
  return Tensor::empty({bytes}, DType::u8, like.device(), stream);
}

bool aligned16(const Tensor& t) {
  return reinterpret_cast<uintptr_t>(t.data()) % 16 == 0;
}

// The graphs declare every tensor 16-byte aligned.
void check_aligned(std::string_view op,
                   std::initializer_list<std::pair<const char*, const Tensor*>> all) {
  for (const auto& [name, t] : all)
    if (!aligned16(*t))
      throw ValueError(
          op, str(name, " ", t->describe(), " must start on a 16-byte boundary for cuDNN"));
}

int compute_capability_major(Device d) {
  int major = 0;
  ZT_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, d.index));
  return major;
}

}  // namespace

int64_t cudnn_runtime_version() {
  return cudnn::runtime_version();
}

std::string cudnn_attention_unsupported(const Tensor& q, const Tensor& k,
                                        const AttentionOptions& opt) {
  if (q.dtype() != DType::bf16 && q.dtype() != DType::f16)
    return str("dtype ", dtype_name(q.dtype()), " (cuDNN attention takes bf16 and f16)");
  if (opt.window != 0) return str("sliding window ", opt.window);
  if (opt.doc_starts.defined()) return "packed rows (doc_starts)";
  const int64_t d = q.size(3);
  if (d % 8 != 0 || d > 128) return str("head dim ", d, " (cuDNN: a multiple of 8, at most 128)");
  if (!aligned16(q) || !aligned16(k)) return "q or k does not start on a 16-byte boundary";
  const int64_t version = cudnn::runtime_version();
  if (version < 90000) return str("cuDNN ", version, " at run time (9.0 or later needed)");
  if (version == 91000 || version == 91001)
    return str("cuDNN ", version, " at run time (its bf16/f16 attention has known bugs)");
  const int major = compute_capability_major(q.device());
  if (major < 8) return str("compute capability ", major, ".x (8.0 or later needed)");
  return "";
}

std::string cudnn_attention_prepare(const Tensor& q, const Tensor& k, const AttentionOptions& opt,
                                    AttentionPass pass) {
  return entry_for(key_of(q, k, opt, pass)).failure;
}

int64_t cudnn_attention_workspace_bytes(const Tensor& q, const Tensor& k,
                                        const AttentionOptions& opt, AttentionPass pass) {
  const PlanEntry& e = entry_for(key_of(q, k, opt, pass));
  return e.plan ? e.plan->workspace_bytes : 0;
}

void cudnn_attention_forward(const Tensor& q, const Tensor& k, const Tensor& v, Tensor& out,
                             Tensor& lse, const AttentionOptions& opt, Stream stream) {
  check_aligned("attention_forward",
                {{"q", &q}, {"k", &k}, {"v", &v}, {"out", &out}, {"lse", &lse}});
  const PlanEntry& e = plan_for(q, k, opt, AttentionPass::forward);
  CudaDeviceGuard guard(q.device());
  Tensor ws = workspace(q, e.plan->workspace_bytes, stream);
  float scale = opt.scale;
  float lowest = std::numeric_limits<float>::lowest();
  const std::vector<int64_t> uids{kQ, kK, kV, kO, kStats, kScale, kMaskedScore};
  const std::vector<void*> ptrs{q.data(),   k.data(), v.data(), out.data(),
                                lse.data(), &scale,   &lowest};
  cudnn::execute(cudnn::handle_for(q.device()), *e.plan, stream.handle, uids, ptrs,
                 ws.defined() ? ws.data() : nullptr);
}

void cudnn_attention_backward(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& out,
                              const Tensor& lse, const Tensor& dout, Tensor& dq, Tensor& dk,
                              Tensor& dv, const AttentionOptions& opt, Stream stream) {
  check_aligned("attention_backward", {{"q", &q},
                                       {"k", &k},
                                       {"v", &v},
                                       {"out", &out},
                                       {"lse", &lse},
                                       {"dout", &dout},
                                       {"dq", &dq},
                                       {"dk", &dk},
                                       {"dv", &dv}});
  const PlanEntry& e = plan_for(q, k, opt, AttentionPass::backward);
  CudaDeviceGuard guard(q.device());
  Tensor ws = workspace(q, e.plan->workspace_bytes, stream);
  // rowsum(dO * O), f32 [B, Hq, S]: written by the graph, read by it after.
  Tensor row_dots =
      Tensor::empty({q.size(0), q.size(2), q.size(1)}, DType::f32, q.device(), stream);
  float scale = opt.scale;
  float lowest = std::numeric_limits<float>::lowest();
  float one = 1.0f;
  std::vector<int64_t> uids{kQ,  kK,  kV,       kO,     kDO,          kStats, kDQ,
                            kDK, kDV, kRowDots, kScale, kMaskedScore, kOne};
  std::vector<void*> ptrs{q.data(),   k.data(),  v.data(),  out.data(), dout.data(),
                          lse.data(), dq.data(), dk.data(), dv.data(),  row_dots.data(),
                          &scale,     &lowest,   &one};
  if (e.padded) {
    uids.insert(uids.end(), {kSeqLenQ, kSeqLenKV});
    ptrs.insert(ptrs.end(), {e.seq_lens.data(), e.seq_lens.data()});
  }
  cudnn::execute(cudnn::handle_for(q.device()), *e.plan, stream.handle, uids, ptrs,
                 ws.defined() ? ws.data() : nullptr);
}

}  // namespace zt::kernels::cuda
