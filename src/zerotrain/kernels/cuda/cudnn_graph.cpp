// cuDNN backend graph API helpers: checked calls, descriptors, per-device handles, the graph
// builder and plan selection. Exercised by tests/kernels/test_attention_cudnn.cpp.
#include "zerotrain/kernels/cuda/cudnn_graph.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <sstream>

#include "zerotrain/core/cuda/cuda_check.h"
#include "zerotrain/core/error.h"

namespace zt::kernels::cuda::cudnn {

namespace {

// The handle attributes of the operation graph and the execution plan are marked deprecated in the
// cuDNN 9.19 headers (device properties take their place there), but the cuDNN 9.14 runtime of the
// GPU machine still needs them. Named by value so the deprecation warning stays out of the build.
constexpr auto kOperationGraphHandle = static_cast<cudnnBackendAttributeName_t>(800);
constexpr auto kExecutionPlanHandle = static_cast<cudnnBackendAttributeName_t>(400);

std::string last_error_message() {
  char buf[2048] = {0};
  cudnnGetLastErrorString(buf, sizeof buf);
  return buf;
}

void debug_line(const std::string& line) {
  if (debug_enabled()) std::fprintf(stderr, "[cudnn] %s\n", line.c_str());
}

}  // namespace

bool debug_enabled() {
  static const bool on = [] {
    const char* v = std::getenv("ZT_CUDNN_DEBUG");
    return v && std::strcmp(v, "1") == 0;
  }();
  return on;
}

void check(cudnnStatus_t status, const std::string& step) {
  if (status == CUDNN_STATUS_SUCCESS) {
    debug_line(step + ": ok");
    return;
  }
  const std::string last = last_error_message();
  debug_line(str(step, ": ", cudnnGetErrorString(status), " (", last, ")"));
  throw BackendError("cudnn", str(step, " failed: ", cudnnGetErrorString(status),
                                  last.empty() ? "" : " (", last, last.empty() ? "" : ")"));
}

int64_t runtime_version() {
  return static_cast<int64_t>(cudnnGetVersion());
}

Descriptor::Descriptor(cudnnBackendDescriptorType_t type, std::string name)
    : name_(std::move(name)) {
  check(cudnnBackendCreateDescriptor(type, &desc_), "create " + name_);
}

Descriptor::~Descriptor() {
  if (desc_) cudnnBackendDestroyDescriptor(desc_);
}

Descriptor::Descriptor(Descriptor&& o) noexcept : desc_(o.desc_), name_(std::move(o.name_)) {
  o.desc_ = nullptr;
}

void Descriptor::set(cudnnBackendAttributeName_t attr, cudnnBackendAttributeType_t type,
                     int64_t count, const void* values, const char* attr_name) {
  check(cudnnBackendSetAttribute(desc_, attr, type, count, values), str(name_, " set ", attr_name));
}

void Descriptor::set_int64(cudnnBackendAttributeName_t attr, int64_t value, const char* attr_name) {
  set(attr, CUDNN_TYPE_INT64, 1, &value, attr_name);
}

void Descriptor::set_int64s(cudnnBackendAttributeName_t attr, const std::vector<int64_t>& values,
                            const char* attr_name) {
  set(attr, CUDNN_TYPE_INT64, static_cast<int64_t>(values.size()), values.data(), attr_name);
}

void Descriptor::set_data_type(cudnnBackendAttributeName_t attr, cudnnDataType_t value,
                               const char* attr_name) {
  set(attr, CUDNN_TYPE_DATA_TYPE, 1, &value, attr_name);
}

void Descriptor::set_bool(cudnnBackendAttributeName_t attr, bool value, const char* attr_name) {
  set(attr, CUDNN_TYPE_BOOLEAN, 1, &value, attr_name);
}

void Descriptor::set_descriptor(cudnnBackendAttributeName_t attr, const Descriptor& value,
                                const char* attr_name) {
  cudnnBackendDescriptor_t d = value.get();
  set(attr, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &d, attr_name);
}

void Descriptor::finalize() {
  check(cudnnBackendFinalize(desc_), "finalize " + name_);
}

DeviceHandle::DeviceHandle(Device d) : device(d) {
  CudaDeviceGuard guard(d);
  check(cudnnCreate(&handle), str("cudnnCreate on ", to_string(d)));
}

DeviceHandle::~DeviceHandle() {
  if (handle) cudnnDestroy(handle);
}

namespace {

struct HandleRegistry {
  HandleRegistry() : handles(static_cast<size_t>(cuda_device_count())) {}
  std::mutex mu;
  std::vector<std::unique_ptr<DeviceHandle>> handles;  // by device index
};

}  // namespace

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

int64_t GraphBuilder::tensor(int64_t uid, const TensorSpec& spec, const char* name) {
  if (debug_enabled()) {
    std::ostringstream line;
    line << "tensor " << name << ": id " << uid << " dims";
    for (int64_t d : spec.dims)
      line << ' ' << d;
    line << ", strides";
    for (int64_t st : spec.strides)
      line << ' ' << st;
    line << ", type " << static_cast<int>(spec.type) << (spec.is_virtual ? ", virtual" : "")
         << (spec.by_value ? ", by value" : "");
    debug_line(line.str());
  }
  if (tensor_index_.count(uid))
    throw Error("cudnn", str("internal: tensor id ", uid, " (", name, ") used twice"));
  Descriptor t(CUDNN_BACKEND_TENSOR_DESCRIPTOR, str("tensor ", name));
  t.set_data_type(CUDNN_ATTR_TENSOR_DATA_TYPE, spec.type, "DATA_TYPE");
  t.set_int64s(CUDNN_ATTR_TENSOR_DIMENSIONS, spec.dims, "DIMENSIONS");
  t.set_int64s(CUDNN_ATTR_TENSOR_STRIDES, spec.strides, "STRIDES");
  t.set_int64(CUDNN_ATTR_TENSOR_UNIQUE_ID, uid, "UNIQUE_ID");
  t.set_int64(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, 16, "BYTE_ALIGNMENT");
  if (spec.is_virtual) t.set_bool(CUDNN_ATTR_TENSOR_IS_VIRTUAL, true, "IS_VIRTUAL");
  if (spec.by_value) t.set_bool(CUDNN_ATTR_TENSOR_IS_BY_VALUE, true, "IS_BY_VALUE");
  t.finalize();
  tensor_index_.emplace(uid, tensors_.size());
  tensors_.push_back(std::move(t));
  return uid;
}

int64_t GraphBuilder::virtual_tensor(std::vector<int64_t> dims, std::vector<int64_t> strides,
                                     cudnnDataType_t type, const char* name) {
  return tensor(next_virtual_uid_++, {std::move(dims), std::move(strides), type, true, false},
                name);
}

int64_t GraphBuilder::scalar(int64_t uid, const char* name) {
  return tensor(uid, {{1, 1, 1, 1}, {1, 1, 1, 1}, CUDNN_DATA_FLOAT, false, true}, name);
}

const Descriptor& GraphBuilder::find(int64_t uid) const {
  auto it = tensor_index_.find(uid);
  if (it == tensor_index_.end()) throw Error("cudnn", str("internal: no tensor with id ", uid));
  return tensors_[it->second];
}

void GraphBuilder::pointwise(cudnnPointwiseMode_t mode, int64_t x, int64_t b, int64_t t, int64_t y,
                             cudnnDataType_t compute, const char* name, int64_t axis) {
  Descriptor pw(CUDNN_BACKEND_POINTWISE_DESCRIPTOR, str("pointwise ", name));
  pw.set(CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &mode, "MODE");
  pw.set_data_type(CUDNN_ATTR_POINTWISE_MATH_PREC, compute, "MATH_PREC");
  if (axis >= 0) pw.set_int64(CUDNN_ATTR_POINTWISE_AXIS, axis, "AXIS");
  pw.finalize();
  Descriptor op(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR, str("operation ", name));
  op.set_descriptor(CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, pw, "PW_DESCRIPTOR");
  op.set_descriptor(CUDNN_ATTR_OPERATION_POINTWISE_XDESC, find(x), "XDESC");
  if (b) op.set_descriptor(CUDNN_ATTR_OPERATION_POINTWISE_BDESC, find(b), "BDESC");
  if (t) op.set_descriptor(CUDNN_ATTR_OPERATION_POINTWISE_TDESC, find(t), "TDESC");
  op.set_descriptor(CUDNN_ATTR_OPERATION_POINTWISE_YDESC, find(y), "YDESC");
  op.finalize();
  op_parts_.push_back(std::move(pw));
  ops_.push_back(std::move(op));
}

void GraphBuilder::reduction(cudnnReduceTensorOp_t op_kind, int64_t x, int64_t y,
                             const char* name) {
  Descriptor red(CUDNN_BACKEND_REDUCTION_DESCRIPTOR, str("reduction ", name));
  red.set(CUDNN_ATTR_REDUCTION_OPERATOR, CUDNN_TYPE_REDUCTION_OPERATOR_TYPE, 1, &op_kind,
          "OPERATOR");
  red.set_data_type(CUDNN_ATTR_REDUCTION_COMP_TYPE, CUDNN_DATA_FLOAT, "COMP_TYPE");
  red.finalize();
  Descriptor op(CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR, str("operation ", name));
  op.set_descriptor(CUDNN_ATTR_OPERATION_REDUCTION_DESC, red, "DESC");
  op.set_descriptor(CUDNN_ATTR_OPERATION_REDUCTION_XDESC, find(x), "XDESC");
  op.set_descriptor(CUDNN_ATTR_OPERATION_REDUCTION_YDESC, find(y), "YDESC");
  op.finalize();
  op_parts_.push_back(std::move(red));
  ops_.push_back(std::move(op));
}

void GraphBuilder::matmul(int64_t a, int64_t b, int64_t c, const char* name, int64_t m_override,
                          int64_t n_override, int64_t k_override) {
  Descriptor mm(CUDNN_BACKEND_MATMUL_DESCRIPTOR, str("matmul ", name));
  mm.set_data_type(CUDNN_ATTR_MATMUL_COMP_TYPE, CUDNN_DATA_FLOAT, "COMP_TYPE");
  mm.finalize();
  Descriptor op(CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR, str("operation ", name));
  op.set_descriptor(CUDNN_ATTR_OPERATION_MATMUL_DESC, mm, "DESC");
  op.set_descriptor(CUDNN_ATTR_OPERATION_MATMUL_ADESC, find(a), "ADESC");
  op.set_descriptor(CUDNN_ATTR_OPERATION_MATMUL_BDESC, find(b), "BDESC");
  op.set_descriptor(CUDNN_ATTR_OPERATION_MATMUL_CDESC, find(c), "CDESC");
  if (m_override)
    op.set_descriptor(CUDNN_ATTR_OPERATION_MATMUL_GEMM_M_OVERRIDE_DESC, find(m_override),
                      "GEMM_M_OVERRIDE_DESC");
  if (n_override)
    op.set_descriptor(CUDNN_ATTR_OPERATION_MATMUL_GEMM_N_OVERRIDE_DESC, find(n_override),
                      "GEMM_N_OVERRIDE_DESC");
  if (k_override)
    op.set_descriptor(CUDNN_ATTR_OPERATION_MATMUL_GEMM_K_OVERRIDE_DESC, find(k_override),
                      "GEMM_K_OVERRIDE_DESC");
  op.finalize();
  op_parts_.push_back(std::move(mm));
  ops_.push_back(std::move(op));
}

void GraphBuilder::reshape(int64_t x, int64_t y, const char* name) {
  Descriptor op(CUDNN_BACKEND_OPERATION_RESHAPE_DESCRIPTOR, str("operation ", name));
  op.set_descriptor(CUDNN_ATTR_OPERATION_RESHAPE_XDESC, find(x), "XDESC");
  op.set_descriptor(CUDNN_ATTR_OPERATION_RESHAPE_YDESC, find(y), "YDESC");
  op.finalize();
  ops_.push_back(std::move(op));
}

namespace {

// The engine behind configuration `cfg`: its global index and whether cuDNN notes it as
// nondeterministic.
struct EngineFacts {
  int64_t index = -1;
  bool nondeterministic = false;
};

EngineFacts engine_facts(cudnnBackendDescriptor_t cfg) {
  Descriptor engine(CUDNN_BACKEND_ENGINE_DESCRIPTOR, "engine of a configuration");
  cudnnBackendDescriptor_t e = engine.get();
  int64_t n = 0;
  check(cudnnBackendGetAttribute(cfg, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                                 &n, &e),
        "engine configuration get ENGINE");
  EngineFacts facts;
  check(cudnnBackendGetAttribute(e, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &n,
                                 &facts.index),
        "engine get GLOBAL_INDEX");
  cudnnBackendNumericalNote_t notes[CUDNN_NUMERICAL_NOTE_TYPE_COUNT];
  int64_t count = 0;
  check(cudnnBackendGetAttribute(e, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, CUDNN_TYPE_NUMERICAL_NOTE,
                                 CUDNN_NUMERICAL_NOTE_TYPE_COUNT, &count, notes),
        "engine get NUMERICAL_NOTE");
  for (int64_t i = 0; i < count && i < CUDNN_NUMERICAL_NOTE_TYPE_COUNT; ++i)
    if (notes[i] == CUDNN_NUMERICAL_NOTE_NONDETERMINISTIC) facts.nondeterministic = true;
  return facts;
}

// The descriptors of `type` (at most 32) held by `owner`'s array attribute `attr`; none when it
// cannot be read (ZT_CUDNN_DEBUG's knob lines only).
std::vector<Descriptor> descriptor_array(cudnnBackendDescriptor_t owner,
                                         cudnnBackendAttributeName_t attr,
                                         cudnnBackendDescriptorType_t type, const char* name) {
  constexpr int64_t kMax = 32;
  std::vector<Descriptor> items;
  std::vector<cudnnBackendDescriptor_t> raw;
  for (int64_t i = 0; i < kMax; ++i) {
    items.emplace_back(type, name);
    raw.push_back(items.back().get());
  }
  int64_t got = 0;
  if (cudnnBackendGetAttribute(owner, attr, CUDNN_TYPE_BACKEND_DESCRIPTOR, kMax, &got,
                               raw.data()) != CUDNN_STATUS_SUCCESS)
    got = 0;
  while (static_cast<int64_t>(items.size()) > std::max<int64_t>(got, 0))
    items.pop_back();
  return items;
}

// The knob choices of configuration `cfg` as "type=value ..." (for ZT_CUDNN_DEBUG's lines).
std::string knob_text(cudnnBackendDescriptor_t cfg) {
  const std::vector<Descriptor> choices = descriptor_array(
      cfg, CUDNN_ATTR_ENGINECFG_KNOB_CHOICES, CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR, "knob choice");
  std::string text;
  for (const Descriptor& choice : choices) {
    cudnnBackendKnobType_t type{};
    int64_t value = 0, n = 0;
    if (cudnnBackendGetAttribute(choice.get(), CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE,
                                 CUDNN_TYPE_KNOB_TYPE, 1, &n, &type) != CUDNN_STATUS_SUCCESS ||
        cudnnBackendGetAttribute(choice.get(), CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE, CUDNN_TYPE_INT64,
                                 1, &n, &value) != CUDNN_STATUS_SUCCESS)
      continue;
    text += str(text.empty() ? "" : " ", static_cast<int>(type), "=", value);
  }
  return text.empty() ? "no knobs" : text;
}

// Which acceptable configuration a plan takes: ZT_CUDNN_CONFIG=N skips the first N (counted over
// the heuristics modes in order), to time the alternatives (kernel_bench) without a rebuild. 0,
// the best by cuDNN's heuristics, unless set.
int64_t configuration_wanted() {
  static const int64_t wanted = [] {
    const char* v = std::getenv("ZT_CUDNN_CONFIG");
    if (!v || !*v) return int64_t{0};
    char* end = nullptr;
    const long long n = std::strtoll(v, &end, 10);
    if (*end != '\0' || n < 0)
      throw ValueError("cudnn", str("ZT_CUDNN_CONFIG='", v, "': must be a count >= 0"));
    return static_cast<int64_t>(n);
  }();
  return wanted;
}

// ZT_CUDNN_ENGINE="[GRAPH@]E[:T=V,T=V]": the plan of the graph named GRAPH (every graph when
// omitted; "attention backward") is built from engine E with knob type T set to V instead of from
// heuristics' proposals, to time variants heuristics do not propose (tuning; kernel_bench).
// Unset: nullopt.
struct EngineRequest {
  std::string graph;  // empty: every graph
  int64_t index = -1;
  std::vector<std::pair<int64_t, int64_t>> knobs;  // (knob type, value)
};

const std::optional<EngineRequest>& engine_requested() {
  static const std::optional<EngineRequest> request = []() -> std::optional<EngineRequest> {
    const char* v = std::getenv("ZT_CUDNN_ENGINE");
    if (!v || !*v) return std::nullopt;
    const std::string text = v;
    const auto bad = [&] {
      return ValueError(
          "cudnn", str("ZT_CUDNN_ENGINE='", text, "': expected [GRAPH@]ENGINE[:TYPE=VALUE,...]"));
    };
    EngineRequest r;
    const size_t at = text.find('@');
    if (at != std::string::npos) r.graph = text.substr(0, at);
    std::istringstream in(at == std::string::npos ? text : text.substr(at + 1));
    char sep = 0;
    if (!(in >> r.index) || r.index < 0) throw bad();
    if (in >> sep) {
      if (sep != ':') throw bad();
      do {
        int64_t type = 0, value = 0;
        char eq = 0;
        if (!(in >> type >> eq >> value) || eq != '=') throw bad();
        r.knobs.emplace_back(type, value);
      } while (in >> sep && sep == ',');
      if (!in.eof()) throw bad();
    }
    return r;
  }();
  return request;
}

// The knobs engine `engine` offers, as "type [min, max] step s ..." (ZT_CUDNN_DEBUG's lines).
std::string knob_ranges(const Descriptor& engine) {
  const std::vector<Descriptor> infos = descriptor_array(
      engine.get(), CUDNN_ATTR_ENGINE_KNOB_INFO, CUDNN_BACKEND_KNOB_INFO_DESCRIPTOR, "knob info");
  std::string text;
  for (const Descriptor& info : infos) {
    cudnnBackendKnobType_t type{};
    int64_t lo = 0, hi = 0, stride = 0, n = 0;
    if (cudnnBackendGetAttribute(info.get(), CUDNN_ATTR_KNOB_INFO_TYPE, CUDNN_TYPE_KNOB_TYPE, 1, &n,
                                 &type) != CUDNN_STATUS_SUCCESS ||
        cudnnBackendGetAttribute(info.get(), CUDNN_ATTR_KNOB_INFO_MINIMUM_VALUE, CUDNN_TYPE_INT64,
                                 1, &n, &lo) != CUDNN_STATUS_SUCCESS ||
        cudnnBackendGetAttribute(info.get(), CUDNN_ATTR_KNOB_INFO_MAXIMUM_VALUE, CUDNN_TYPE_INT64,
                                 1, &n, &hi) != CUDNN_STATUS_SUCCESS ||
        cudnnBackendGetAttribute(info.get(), CUDNN_ATTR_KNOB_INFO_STRIDE, CUDNN_TYPE_INT64, 1, &n,
                                 &stride) != CUDNN_STATUS_SUCCESS)
      continue;
    text += str(text.empty() ? "" : ", ", static_cast<int>(type), " [", lo, ", ", hi, "] step ",
                stride);
  }
  return text.empty() ? "no knobs" : text;
}

// The one configuration ZT_CUDNN_ENGINE asks for; the engine and knob descriptors it refers to go
// to `keep`, which must outlive the plan.
std::vector<Descriptor> requested_config(const Descriptor& graph, const EngineRequest& r,
                                         std::vector<Descriptor>& keep) {
  Descriptor engine(CUDNN_BACKEND_ENGINE_DESCRIPTOR, str("engine ", r.index));
  engine.set_descriptor(CUDNN_ATTR_ENGINE_OPERATION_GRAPH, graph, "OPERATION_GRAPH");
  engine.set_int64(CUDNN_ATTR_ENGINE_GLOBAL_INDEX, r.index, "GLOBAL_INDEX");
  engine.finalize();
  debug_line(str("engine ", r.index, " knobs: ", knob_ranges(engine)));
  std::vector<cudnnBackendDescriptor_t> choices;
  for (const auto& [type, value] : r.knobs) {
    Descriptor choice(CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR, str("knob ", type));
    const auto knob = static_cast<cudnnBackendKnobType_t>(type);
    choice.set(CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE, CUDNN_TYPE_KNOB_TYPE, 1, &knob, "KNOB_TYPE");
    choice.set_int64(CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE, value, "KNOB_VALUE");
    choice.finalize();
    choices.push_back(choice.get());
    keep.push_back(std::move(choice));
  }
  std::vector<Descriptor> configs;
  configs.emplace_back(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, "requested engine configuration");
  configs.back().set_descriptor(CUDNN_ATTR_ENGINECFG_ENGINE, engine, "ENGINE");
  if (!choices.empty())
    configs.back().set(CUDNN_ATTR_ENGINECFG_KNOB_CHOICES, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                       static_cast<int64_t>(choices.size()), choices.data(), "KNOB_CHOICES");
  configs.back().finalize();
  keep.push_back(std::move(engine));
  return configs;
}

// The engine configurations heuristics `mode` proposes for `graph`, best first.
std::vector<Descriptor> engine_configs(const Descriptor& graph, cudnnBackendHeurMode_t mode,
                                       const char* mode_name) {
  Descriptor heur(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, str("heuristics ", mode_name));
  heur.set_descriptor(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, graph, "OPERATION_GRAPH");
  heur.set(CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode, "MODE");
  heur.finalize();
  int64_t count = 0;
  check(cudnnBackendGetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                 CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count, nullptr),
        str("heuristics ", mode_name, " count RESULTS"));
  std::vector<Descriptor> configs;
  std::vector<cudnnBackendDescriptor_t> raw;
  for (int64_t i = 0; i < count; ++i) {
    configs.emplace_back(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, str("engine configuration ", i));
    raw.push_back(configs.back().get());
  }
  if (count > 0) {
    int64_t got = 0;
    check(cudnnBackendGetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                   CUDNN_TYPE_BACKEND_DESCRIPTOR, count, &got, raw.data()),
          str("heuristics ", mode_name, " get RESULTS"));
    while (static_cast<int64_t>(configs.size()) > std::min(got, count))
      configs.pop_back();
  }
  debug_line(str("heuristics ", mode_name, ": ", configs.size(), " configurations"));
  return configs;
}

}  // namespace

ExecutionPlan GraphBuilder::build_plan(bool deterministic, const char* graph_name) {
  Descriptor graph(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, str("operation graph ", graph_name));
  std::vector<cudnnBackendDescriptor_t> ops;
  for (const Descriptor& op : ops_)
    ops.push_back(op.get());
  graph.set(CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR,
            static_cast<int64_t>(ops.size()), ops.data(), "OPS");
  cudnnHandle_t h = handle_.handle;
  graph.set(kOperationGraphHandle, CUDNN_TYPE_HANDLE, 1, &h, "HANDLE");
  graph.finalize();

  std::vector<std::string> refusals;
  const std::pair<cudnnBackendHeurMode_t, const char*> modes[] = {
      {CUDNN_HEUR_MODE_A, "A"}, {CUDNN_HEUR_MODE_B, "B"}, {CUDNN_HEUR_MODE_FALLBACK, "fallback"}};
  int64_t skip = configuration_wanted();
  const std::optional<EngineRequest>& requested = engine_requested();
  const std::optional<EngineRequest> request =
      requested && (requested->graph.empty() || requested->graph == graph_name) ? requested
                                                                                : std::nullopt;
  std::vector<Descriptor> keep;  // what a requested configuration refers to
  for (const auto& [mode, listed_mode_name] : modes) {
    const char* mode_name = request ? "ZT_CUDNN_ENGINE" : listed_mode_name;
    std::vector<Descriptor> configs;
    try {
      configs = request ? requested_config(graph, *request, keep)
                        : engine_configs(graph, mode, mode_name);
    } catch (const BackendError& e) {
      refusals.push_back(e.what());
      if (request) break;
      continue;
    }
    for (Descriptor& cfg : configs) {
      EngineFacts facts;
      auto plan = std::make_unique<Descriptor>(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR,
                                               str("execution plan ", graph_name));
      try {
        facts = engine_facts(cfg.get());
      } catch (const BackendError& e) {
        debug_line(str("engine facts unreadable, taking the configuration as it is: ", e.what()));
      }
      try {
        if (deterministic && facts.nondeterministic) {
          refusals.push_back(str("engine ", facts.index, ": nondeterministic"));
          continue;
        }
        plan->set(kExecutionPlanHandle, CUDNN_TYPE_HANDLE, 1, &h, "HANDLE");
        plan->set_descriptor(CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, cfg, "ENGINE_CONFIG");
        plan->finalize();
      } catch (const BackendError& e) {
        refusals.push_back(str("engine ", facts.index, ": ", e.what()));
        continue;
      }
      debug_line(str(graph_name, ": acceptable configuration, heuristics ", mode_name, ", engine ",
                     facts.index, ", knobs ", knob_text(cfg.get()),
                     skip > 0 ? " (skipped: ZT_CUDNN_CONFIG)" : ""));
      if (skip > 0) {
        --skip;
        continue;
      }
      ExecutionPlan result;
      int64_t n = 0;
      check(cudnnBackendGetAttribute(plan->get(), CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
                                     CUDNN_TYPE_INT64, 1, &n, &result.workspace_bytes),
            str("execution plan ", graph_name, " get WORKSPACE_SIZE"));
      result.engine_index = facts.index;
      result.plan = std::move(plan);
      for (Descriptor& t : tensors_)
        result.parts.push_back(std::move(t));
      for (Descriptor& p : op_parts_)
        result.parts.push_back(std::move(p));
      for (Descriptor& op : ops_)
        result.parts.push_back(std::move(op));
      result.parts.push_back(std::move(graph));
      for (Descriptor& d : keep)
        result.parts.push_back(std::move(d));
      result.parts.push_back(std::move(cfg));
      tensors_.clear();
      op_parts_.clear();
      ops_.clear();
      tensor_index_.clear();
      debug_line(str(graph_name, ": engine ", result.engine_index, ", workspace ",
                     result.workspace_bytes, " bytes"));
      return result;
    }
    if (request) break;  // the one requested configuration was refused
  }
  std::string why;
  for (const std::string& r : refusals)
    why += (why.empty() ? "" : "; ") + r;
  if (configuration_wanted() > 0)
    why += str(why.empty() ? "" : "; ", "ZT_CUDNN_CONFIG=", configuration_wanted(), " skipped ",
               configuration_wanted() - skip, " acceptable configurations, all there were");
  throw BackendError("cudnn", str("no engine runs the ", graph_name, " graph",
                                  why.empty() ? " (heuristics proposed none)" : ": " + why));
}

void execute(DeviceHandle& handle, const ExecutionPlan& plan, void* stream,
             const std::vector<int64_t>& uids, const std::vector<void*>& pointers,
             void* workspace) {
  Descriptor pack(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, "variant pack");
  pack.set_int64s(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, uids, "UNIQUE_IDS");
  pack.set(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR,
           static_cast<int64_t>(pointers.size()), pointers.data(), "DATA_POINTERS");
  pack.set(CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &workspace, "WORKSPACE");
  pack.finalize();
  std::lock_guard lock(handle.mu);
  check(cudnnSetStream(handle.handle, static_cast<cudaStream_t>(stream)), "cudnnSetStream");
  check(cudnnBackendExecute(handle.handle, plan.plan->get(), pack.get()), "cudnnBackendExecute");
}

}  // namespace zt::kernels::cuda::cudnn
