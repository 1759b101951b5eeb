// cuDNN fused flash attention through NVIDIA's cudnn-frontend: the forward and backward SDPA graphs,
// their plan cache, and the calls that run them on our tensors. The only file that includes the
// frontend. Tested by tests/kernels/test_attention_cudnn.cpp.
#include "zerotrain/kernels/cuda/cudnn_attention.h"

#include <dlfcn.h>

#include <cudnn_frontend.h>

#include <cstdint>
#include <exception>
#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "zerotrain/core/cuda/cuda_check.h"
#include "zerotrain/kernels/cuda/cudnn_env.h"
#include "zerotrain/kernels/cuda/head_groups.h"

// The frontend calls cuDNN through this handle (NV_CUDNN_FRONTEND_USE_DYNAMIC_LOADING): set once by
// cudnn_library_failure() below before any frontend call.
namespace cudnn_frontend {
void* cudnn_dlhandle = nullptr;
}  // namespace cudnn_frontend

namespace zt::kernels::cuda {

// [Note: cuDNN attention graphs]
// cuDNN 9.x runs scaled-dot-product attention as one fused kernel when handed the SDPA graph, and
// NVIDIA's header-only cudnn-frontend (1.32, unpacked by scripts/install_deps.sh) draws it:
// Graph::sdpa for the forward (with Stats: the lse) and Graph::sdpa_backward for the backward.
// Shapes are cuDNN's (b, h, s, d) over our [B, S, H, D] memory, strides (S*H*D, D, H*D, 1); the
// causal mask is top-left (query i keeps key j <= i); the scale is a pass-by-value scalar of the
// graph (it is part of the plan key). Which graphs:
// - The forward is pinned to the frontend's COMPOSITE implementation, the graph of primitive
//   operations (Q K^T, scale, mask, softmax with Stats, P V). The frontend's default would take
//   cuDNN's single SDPA operation (UNIFIED) from 9.13.1 on, so on the GPU machine's 9.14 too.
//   COMPOSITE is the graph our own backend-API layer drew before this file used the frontend, so
//   cuDNN picks the same engine and knobs for it (engine 2, KERNEL_CFG 7 at 1x4096x32x128) and
//   its results keep their bits; it runs on every 9.x.
//   The backward exists only as a composite graph.
// - The backward is the frontend's deterministic one (set_deterministic_algorithm): on Hopper it
//   draws dQ straight from the dS K matmul, which makes cuDNN keep dP in its workspace (about
//   B * Hq * S^2 * 2 bytes, [Note: cuDNN workspace budget]) instead of accumulating dQ in f32 with
//   atomics, which is not bitwise repeatable. Engines cuDNN notes NONDETERMINISTIC are deselected
//   as well; tests/kernels/test_attention_cudnn.cpp runs the backward twice and compares bitwise.
//   (From cuDNN 9.25 the frontend also offers an ordered-dQ deterministic backward with workspace
//   linear in S, opt-in through CUDNN_FRONTEND_ATTN_DP_WORKSPACE_LIMIT; not taken here.)
// - Up to cuDNN 9.15.0 the backward needs a padding mask when S is not a multiple of 128; the
//   frontend adds it itself (per-batch lengths, all S, kept in the plan's workspace).
// Linking: the frontend is compiled with NV_CUDNN_FRONTEND_USE_DYNAMIC_LOADING. It then calls cuDNN
// through libcudnn.so.9, opened here on first use, and CUDA through libcudart.so.13 (or .12; the
// process's own when that is what the loader finds; CUDNN_FRONTEND_CUDART_LIB_NAME names one), so
// libzerotrain links neither cuDNN nor the NVRTC library the frontend's experimental Blackwell
// engines call, and a machine without cuDNN runs our kernels (cudnn_attention_unsupported says
// why). CUDNN_FRONTEND_SKIP_JSON_LIB leaves out the frontend's JSON serialization and with it its
// own copy of nlohmann-json (3.11.3, beside the system's that the rest of zerotrain uses).
// Plans: cuDNN's heuristics A, then B, then the fallback list; the first configuration that builds
// is taken (or ZT_CUDNN_CONFIG's / ZT_CUDNN_ENGINE's, cudnn_env.h) and cached per PlanKey with its
// workspace size, a failed build with its reason. ZT_CUDNN_DEBUG=1 prints our steps;
// CUDNN_FRONTEND_LOG_INFO=1 CUDNN_FRONTEND_LOG_FILE=stderr prints the frontend's own trace.
// The hand-written graph layer (~900 lines: descriptors, builder, heuristics walk) this replaced
// drew the same two graphs and cuDNN took the same plans for them; in one call on an H200 the
// frontend's ran at the same speed (1x4096x32x128 causal bf16, forward + deterministic backward:
// 429.1 TFLOP/s against the layer's 428.8 and 428.0; Llama-1B training 1.002x) and the default
// job kept its bits (bench/results/cudnn_frontend_h200.json).

// [Note: cuDNN's grouped-query gradients]
// With fewer kv heads than query heads the frontend's backward graph computes dK and dV per query
// head ("dK_fullhead", "dV_fullhead" of cudnn_frontend/node/scaled_dot_product_flash_attention.h)
// in the io dtype, bf16, and reduces them over each group. Issue 32 measured bf16 training drift
// growing with the group size on this path and not on ours, which sum a group's contributions in
// f32 and round once; the rounding of each head's share before the sum is the suspect.
// ZT_CUDNN_GQA=expand (cudnn_env.h) takes the sum out of cuDNN: K and V repeated to the query
// heads (head_groups.h), the plain multi-head backward, each group's dK and dV summed in f32 and
// rounded once. It costs the repeat and the sum (memory-bound, about 4 * B * S * Hq * D elements
// moved) and the wide buffers (attention_select.h's workspace budget still reads the grouped
// plan). Not yet run on a GPU: tests/kernels/
// test_attention_cudnn_gqa_accuracy.cpp measures both ways against float64 (and prints what an
// f64 group sum would reach), tools/device_run_gqa.sh times them; the default stays fused until
// those numbers decide.

namespace {

namespace fe = cudnn_frontend;
using fe::graph::Graph;
using TensorAttributes = fe::graph::Tensor_attributes;

// Ids of the tensors the caller supplies (the frontend numbers its own from a higher range).
enum TensorId : int64_t {
  kQ = 1,
  kK,
  kV,
  kO,
  kStats,
  kDO,
  kDQ,
  kDK,
  kDV,
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

// libcudnn.so.9 opened for the frontend, once: "" when it is, otherwise why not.
const std::string& cudnn_library_failure() {
  static const std::string failure = []() -> std::string {
    dlerror();
    void* lib = dlopen("libcudnn.so.9", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      const char* why = dlerror();
      return str("libcudnn.so.9 cannot be loaded (", why ? why : "no reason given", ")");
    }
    fe::cudnn_dlhandle = lib;
    return "";
  }();
  return failure;
}

// Throws BackendError("cudnn", ...) naming `step` unless the frontend's `status` is good.
void check(fe::error_t status, const std::string& step) {  // get_message() is not const
  if (status.is_good()) {
    cudnn_env::debug_line(step + ": ok");
    return;
  }
  cudnn_env::debug_line(str(step, ": ", status.get_message()));
  throw BackendError("cudnn", str(step, " failed: ", status.get_message()));
}

void check(cudnnStatus_t status, const std::string& step) {
  if (status == CUDNN_STATUS_SUCCESS) return;
  throw BackendError("cudnn", str(step, " failed: ", fe::detail::get_error_string(status), " (",
                                  fe::detail::get_last_error_string_(), ")"));
}

// The cuDNN handle of one device. cudnnSetStream + execute run under `mu`, since the handle's
// stream is shared state.
struct DeviceHandle {
  explicit DeviceHandle(Device d) {
    CudaDeviceGuard guard(d);
    check(fe::detail::create_handle(&handle), str("cudnnCreate on ", to_string(d)));
  }
  ~DeviceHandle() {
    if (handle) fe::detail::destroy_handle(handle);
  }
  DeviceHandle(const DeviceHandle&) = delete;
  DeviceHandle& operator=(const DeviceHandle&) = delete;

  cudnnHandle_t handle = nullptr;
  std::mutex mu;
};

struct HandleRegistry {
  HandleRegistry() : handles(static_cast<size_t>(cuda_device_count())) {}
  std::mutex mu;
  std::vector<std::unique_ptr<DeviceHandle>> handles;  // by device index
};

// The handle of CUDA device `d`, created on first use (thread-safe).
DeviceHandle& handle_for(Device d) {
  static HandleRegistry registry;
  std::lock_guard lock(registry.mu);
  if (d.index < 0 || static_cast<size_t>(d.index) >= registry.handles.size())
    throw DeviceError(
        "cudnn", str("no CUDA device ", to_string(d), " (", registry.handles.size(), " visible)"));
  auto& h = registry.handles[static_cast<size_t>(d.index)];
  if (!h) h = std::make_unique<DeviceHandle>(d);
  return *h;
}

fe::DataType_t io_type(DType t) {
  return t == DType::bf16 ? fe::DataType_t::BFLOAT16 : fe::DataType_t::HALF;
}

// Our [B, S, H, D] memory as cuDNN's (b, h, s, d).
TensorAttributes& as_bhsd(TensorAttributes& t, int64_t uid, int64_t B, int64_t H, int64_t S,
                          int64_t D) {
  return t.set_uid(uid).set_dim({B, H, S, D}).set_stride({S * H * D, D, H * D, 1});
}

// One f32 value per query row, (b, h, s, 1): our lse [B, H, S].
TensorAttributes& as_rows(TensorAttributes& t, int64_t uid, int64_t B, int64_t H, int64_t S) {
  return t.set_uid(uid)
      .set_dim({B, H, S, 1})
      .set_stride({H * S, S, 1, 1})
      .set_data_type(fe::DataType_t::FLOAT);
}

std::shared_ptr<TensorAttributes> input(Graph& g, const char* name, int64_t uid, int64_t B,
                                        int64_t H, int64_t S, int64_t D) {
  TensorAttributes t;
  as_bhsd(t.set_name(name), uid, B, H, S, D);
  return g.tensor(t);
}

int compute_capability(Device d, cudaDeviceAttr which) {
  int value = 0;
  ZT_CUDA_CHECK(cudaDeviceGetAttribute(&value, which, d.index));
  return value;
}

// A graph for the device of `p`, named by its SM version (else the frontend would ask the CUDA
// runtime it loaded for its current device).
std::shared_ptr<Graph> new_graph(const PlanKey& p) {
  auto g = std::make_shared<Graph>();
  const Device dev = Device::cuda(p.device);
  g->set_sm_version(compute_capability(dev, cudaDevAttrComputeCapabilityMajor) * 10 +
                    compute_capability(dev, cudaDevAttrComputeCapabilityMinor));
  g->set_io_data_type(io_type(p.dtype))
      .set_intermediate_data_type(fe::DataType_t::FLOAT)
      .set_compute_data_type(fe::DataType_t::FLOAT);
  return g;
}

std::shared_ptr<Graph> forward_graph(const PlanKey& p) {
  auto g = new_graph(p);
  const auto q = input(*g, "Q", kQ, p.B, p.Hq, p.S, p.D);
  const auto k = input(*g, "K", kK, p.B, p.Hkv, p.S, p.D);
  const auto v = input(*g, "V", kV, p.B, p.Hkv, p.S, p.D);
  const auto attributes = fe::graph::SDPA_attributes()
                              .set_name("attention forward")
                              .set_generate_stats(true)
                              .set_causal_mask(true)
                              .set_attn_scale(p.scale)
                              .set_implementation(fe::AttentionImplementation_t::COMPOSITE);
  const auto [o, stats] = g->sdpa(q, k, v, attributes);
  as_bhsd(o->set_output(true), kO, p.B, p.Hq, p.S, p.D);
  as_rows(stats->set_output(true), kStats, p.B, p.Hq, p.S);
  return g;
}

std::shared_ptr<Graph> backward_graph(const PlanKey& p) {
  auto g = new_graph(p);
  const auto q = input(*g, "Q", kQ, p.B, p.Hq, p.S, p.D);
  const auto k = input(*g, "K", kK, p.B, p.Hkv, p.S, p.D);
  const auto v = input(*g, "V", kV, p.B, p.Hkv, p.S, p.D);
  const auto o = input(*g, "O", kO, p.B, p.Hq, p.S, p.D);
  const auto dout = input(*g, "dO", kDO, p.B, p.Hq, p.S, p.D);
  TensorAttributes stats_in;
  const auto stats = g->tensor(as_rows(stats_in.set_name("Stats"), kStats, p.B, p.Hq, p.S));
  const auto attributes = fe::graph::SDPA_backward_attributes()
                              .set_name("attention backward")
                              .set_causal_mask(true)
                              .set_attn_scale(p.scale)
                              .set_deterministic_algorithm(true);
  const auto [dq, dk, dv] = g->sdpa_backward(q, k, v, o, dout, stats, attributes);
  as_bhsd(dq->set_output(true), kDQ, p.B, p.Hq, p.S, p.D);
  as_bhsd(dk->set_output(true), kDK, p.B, p.Hkv, p.S, p.D);
  as_bhsd(dv->set_output(true), kDV, p.B, p.Hkv, p.S, p.D);
  return g;
}

// A cached build: the graph with its chosen plan, or why there is none.
struct PlanEntry {
  std::shared_ptr<Graph> graph;
  int64_t plan_index = -1;  // the frontend's index of the plan taken
  int64_t workspace_bytes = 0;
  std::string failure;
};

// The engine configurations for `g`: ZT_CUDNN_ENGINE's one, or heuristics A, B and the fallback
// list in that order.
void create_configurations(Graph& g, const char* name) {
  if (const auto request = cudnn_env::engine_requested_for(name)) {
    std::unordered_map<fe::KnobType_t, int64_t> knobs;
    for (const auto& [type, value] : request->knobs)
      knobs[fe::convert_from_backend_knob_type(static_cast<cudnnBackendKnobType_t>(type))] = value;
    check(g.create_execution_plan(request->engine, knobs),
          str(name, ": configuration of engine ", request->engine, " (ZT_CUDNN_ENGINE)"));
    return;
  }
  check(g.create_execution_plans({fe::HeurMode_t::A, fe::HeurMode_t::B, fe::HeurMode_t::FALLBACK}),
        str(name, ": heuristics"));
}

// Builds the graph of `p` and takes the first configuration that builds (after ZT_CUDNN_CONFIG's
// skips). Throws with every refusal when none does.
void build(DeviceHandle& h, const PlanKey& p, PlanEntry& e) {
  const char* name = pass_name(p.pass);
  e.graph = p.pass == AttentionPass::forward ? forward_graph(p) : backward_graph(p);
  Graph& g = *e.graph;
  check(g.validate(), str(name, ": validate"));
  check(g.build_operation_graph(h.handle), str(name, ": operation graph"));
  create_configurations(g, name);
  if (p.pass == AttentionPass::backward)
    g.deselect_numeric_notes({fe::NumericalNote_t::NONDETERMINISTIC});
  const int64_t count = g.get_execution_plan_count();
  int64_t skip = cudnn_env::configurations_to_skip();
  std::string refusals;
  for (int64_t i = 0; i < count; ++i) {
    std::string tag;
    if (g.get_plan_name_at_index(i, tag).is_bad()) tag = str("configuration ", i);
    fe::error_t built = g.build_plan_at_index(i);
    if (built.is_bad()) {
      cudnn_env::debug_line(str(name, ": ", tag, " refused: ", built.get_message()));
      refusals += str(refusals.empty() ? "" : "; ", tag, ": ", built.get_message());
      continue;
    }
    cudnn_env::debug_line(str(name, ": ", tag, " builds",
                              skip > 0 ? " (skipped: ZT_CUDNN_CONFIG)" : ""));
    if (skip > 0) {
      --skip;
      continue;
    }
    check(g.get_workspace_size_plan_at_index(i, e.workspace_bytes),
          str(name, ": workspace of ", tag));
    e.plan_index = i;
    cudnn_env::debug_line(str(name, ": plan ", tag, ", workspace ", e.workspace_bytes, " bytes"));
    return;
  }
  if (cudnn_env::configurations_to_skip() > 0)
    refusals += str(refusals.empty() ? "" : "; ", "ZT_CUDNN_CONFIG=",
                    cudnn_env::configurations_to_skip(), " skipped ",
                    cudnn_env::configurations_to_skip() - skip,
                    " buildable configurations, all there were");
  throw BackendError("cudnn", str("no engine runs the ", name, " graph",
                                  refusals.empty() ? " (heuristics proposed none)"
                                                   : ": " + refusals));
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
  try {
    if (!cudnn_library_failure().empty()) throw BackendError("cudnn", cudnn_library_failure());
    const Device dev = Device::cuda(key.device);
    CudaDeviceGuard guard(dev);
    build(handle_for(dev), key, e);
  } catch (const std::exception& err) {  // ours, or the frontend's std::runtime_error
    e.graph.reset();
    e.plan_index = -1;
    e.failure = err.what();
  }
  return e;
}

// The plan of this case; throws with the build's failure.
const PlanEntry& plan_for(const Tensor& q, const Tensor& k, const AttentionOptions& opt,
                          AttentionPass pass) {
  const PlanEntry& e = entry_for(key_of(q, k, opt, pass));
  if (!e.graph)
    throw BackendError(pass == AttentionPass::forward ? "attention_forward" : "attention_backward",
                       str("cuDNN cannot run q ", q.describe(), ": ", e.failure));
  return e;
}

// Runs the plan of `e` on `stream` over `pointers` (by tensor id), with a workspace of its size.
void execute(const PlanEntry& e, const Tensor& like, Stream stream,
             std::unordered_map<int64_t, void*>& pointers) {
  CudaDeviceGuard guard(like.device());
  Tensor ws;
  if (e.workspace_bytes > 0)
    ws = Tensor::empty({e.workspace_bytes}, DType::u8, like.device(), stream);
  DeviceHandle& h = handle_for(like.device());
  std::lock_guard lock(h.mu);
  check(fe::detail::set_stream(h.handle, static_cast<cudaStream_t>(stream.handle)),
        "cudnnSetStream");
  check(e.graph->execute_plan_at_index(h.handle, pointers, ws.defined() ? ws.data() : nullptr,
                                       e.plan_index),
        "execute");
}

bool aligned16(const Tensor& t) {
  return reinterpret_cast<uintptr_t>(t.data()) % 16 == 0;
}

// The graphs take every tensor 16-byte aligned.
void check_aligned(std::string_view op,
                   std::initializer_list<std::pair<const char*, const Tensor*>> all) {
  for (const auto& [name, t] : all)
    if (!aligned16(*t))
      throw ValueError(
          op, str(name, " ", t->describe(), " must start on a 16-byte boundary for cuDNN"));
}

}  // namespace

int64_t cudnn_runtime_version() {
  if (!cudnn_library_failure().empty()) return 0;
  return static_cast<int64_t>(fe::detail::get_backend_version());
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
  if (!cudnn_library_failure().empty()) return cudnn_library_failure();
  const int64_t version = cudnn_runtime_version();
  if (version < 90000) return str("cuDNN ", version, " at run time (9.0 or later needed)");
  if (version == 91000 || version == 91001)
    return str("cuDNN ", version, " at run time (its bf16/f16 attention has known bugs)");
  const int major = compute_capability(q.device(), cudaDevAttrComputeCapabilityMajor);
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
  return e.graph ? e.workspace_bytes : 0;
}

void cudnn_attention_forward(const Tensor& q, const Tensor& k, const Tensor& v, Tensor& out,
                             Tensor& lse, const AttentionOptions& opt, Stream stream) {
  check_aligned("attention_forward",
                {{"q", &q}, {"k", &k}, {"v", &v}, {"out", &out}, {"lse", &lse}});
  const PlanEntry& e = plan_for(q, k, opt, AttentionPass::forward);
  std::unordered_map<int64_t, void*> pointers{
      {kQ, q.data()}, {kK, k.data()}, {kV, v.data()}, {kO, out.data()}, {kStats, lse.data()}};
  execute(e, q, stream, pointers);
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
  // A grouped case with ZT_CUDNN_GQA=expand: [Note: cuDNN's grouped-query gradients].
  if (q.size(2) != k.size(2) && cudnn_env::group_sum_outside()) {
    const Device dev = q.device();
    Tensor k_wide = Tensor::empty(q.shape(), k.dtype(), dev, stream),
           v_wide = Tensor::empty(q.shape(), v.dtype(), dev, stream),
           dk_wide = Tensor::empty(q.shape(), dk.dtype(), dev, stream),
           dv_wide = Tensor::empty(q.shape(), dv.dtype(), dev, stream);
    repeat_kv_heads(k, k_wide, stream);
    repeat_kv_heads(v, v_wide, stream);
    const PlanEntry& e = plan_for(q, k_wide, opt, AttentionPass::backward);
    std::unordered_map<int64_t, void*> pointers{
        {kQ, q.data()},       {kK, k_wide.data()}, {kV, v_wide.data()},   {kO, out.data()},
        {kDO, dout.data()},   {kStats, lse.data()}, {kDQ, dq.data()},     {kDK, dk_wide.data()},
        {kDV, dv_wide.data()}};
    execute(e, q, stream, pointers);
    sum_head_groups(dk_wide, dk, stream);
    sum_head_groups(dv_wide, dv, stream);
    return;
  }
  const PlanEntry& e = plan_for(q, k, opt, AttentionPass::backward);
  std::unordered_map<int64_t, void*> pointers{
      {kQ, q.data()},    {kK, k.data()},   {kV, v.data()},   {kO, out.data()},  {kDO, dout.data()},
      {kStats, lse.data()}, {kDQ, dq.data()}, {kDK, dk.data()}, {kDV, dv.data()}};
  execute(e, q, stream, pointers);
}

}  // namespace zt::kernels::cuda
