// cuDNN's backend graph API in small pieces: checked calls (a failure names the step, cuDNN's
// status and its last error message), an owning descriptor, one cuDNN handle per device, and a
// builder that turns tensors and operations into an operation graph and then into an execution plan
// chosen by cuDNN's heuristics. Knows nothing of attention; kernels/cuda/cudnn_attention.cpp draws
// its graphs with it. Include only from CUDA-backend sources. ZT_CUDNN_DEBUG=1 prints every step to
// stderr. Exercised by tests/kernels/test_attention_cudnn.cpp.
#pragma once

#include <cudnn.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "zerotrain/core/device.h"

namespace zt::kernels::cuda::cudnn {

// Whether ZT_CUDNN_DEBUG=1 (read once).
bool debug_enabled();

// Throws BackendError("cudnn", ...) naming `step` unless `status` is CUDNN_STATUS_SUCCESS.
void check(cudnnStatus_t status, const std::string& step);

// cuDNN's version at run time (cudnnGetVersion(): 9.14.0 is 91400).
int64_t runtime_version();

// One backend descriptor, destroyed with its owner. Move-only.
class Descriptor {
 public:
  Descriptor(cudnnBackendDescriptorType_t type, std::string name);
  ~Descriptor();
  Descriptor(Descriptor&& o) noexcept;
  Descriptor& operator=(Descriptor&&) = delete;
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;

  cudnnBackendDescriptor_t get() const { return desc_; }
  const std::string& name() const { return name_; }

  void set(cudnnBackendAttributeName_t attr, cudnnBackendAttributeType_t type, int64_t count,
           const void* values, const char* attr_name);
  void set_int64(cudnnBackendAttributeName_t attr, int64_t value, const char* attr_name);
  void set_int64s(cudnnBackendAttributeName_t attr, const std::vector<int64_t>& values,
                  const char* attr_name);
  void set_data_type(cudnnBackendAttributeName_t attr, cudnnDataType_t value,
                     const char* attr_name);
  void set_bool(cudnnBackendAttributeName_t attr, bool value, const char* attr_name);
  void set_descriptor(cudnnBackendAttributeName_t attr, const Descriptor& value,
                      const char* attr_name);
  void finalize();

 private:
  cudnnBackendDescriptor_t desc_ = nullptr;
  std::string name_;
};

// The cuDNN handle of one device. cudnnSetStream + cudnnBackendExecute run under `mu`, since the
// handle's stream is shared state.
struct DeviceHandle {
  explicit DeviceHandle(Device d);
  ~DeviceHandle();
  DeviceHandle(const DeviceHandle&) = delete;
  DeviceHandle& operator=(const DeviceHandle&) = delete;

  Device device;
  cudnnHandle_t handle = nullptr;
  std::mutex mu;
};

// The handle of CUDA device `d`, created on first use (thread-safe).
DeviceHandle& handle_for(Device d);

// A tensor of the graph, named by its unique id. dims/strides have cuDNN's meaning (elements).
struct TensorSpec {
  std::vector<int64_t> dims, strides;
  cudnnDataType_t type = CUDNN_DATA_FLOAT;
  bool is_virtual = false;  // lives only inside the fused kernel
  bool by_value = false;    // a host scalar handed over in the variant pack
};

// An execution plan and everything it was made from (kept alive with it).
struct ExecutionPlan {
  std::vector<Descriptor> parts;  // tensors, operations, the graph, the engine configuration
  std::unique_ptr<Descriptor> plan;
  int64_t workspace_bytes = 0;
  int64_t engine_index = -1;  // cuDNN's global engine index, for messages
};

// Builds one operation graph. Tensor ids are chosen by the caller; virtual tensors may take ids
// from `next_virtual_id()`.
class GraphBuilder {
 public:
  explicit GraphBuilder(const DeviceHandle& handle) : handle_(handle) {}

  int64_t tensor(int64_t uid, const TensorSpec& spec, const char* name);
  int64_t virtual_tensor(std::vector<int64_t> dims, std::vector<int64_t> strides,
                         cudnnDataType_t type, const char* name);
  // A by-value f32 scalar [1, 1, 1, 1].
  int64_t scalar(int64_t uid, const char* name);

  // y = mode(x[, b[, t]]) computed in `compute`; GEN_INDEX takes `axis`.
  void pointwise(cudnnPointwiseMode_t mode, int64_t x, int64_t b, int64_t t, int64_t y,
                 cudnnDataType_t compute, const char* name, int64_t axis = -1);
  // y = op over the dims where y is 1 and x is not.
  void reduction(cudnnReduceTensorOp_t op, int64_t x, int64_t y, const char* name);
  // c = a @ b, batched over the leading dims; the overrides (tensor ids, or 0) bound m, n, k.
  void matmul(int64_t a, int64_t b, int64_t c, const char* name, int64_t m_override = 0,
              int64_t n_override = 0, int64_t k_override = 0);
  // y = x seen with y's dims and strides.
  void reshape(int64_t x, int64_t y, const char* name);

  // Finalizes the graph, asks the heuristics (mode A, then the fallback list) and returns the first
  // configuration that finalizes as a plan; with `deterministic`, engines that carry cuDNN's
  // NONDETERMINISTIC numerical note are skipped. Throws with every refusal on failure.
  ExecutionPlan build_plan(bool deterministic, const char* graph_name);

 private:
  const Descriptor& find(int64_t uid) const;

  const DeviceHandle& handle_;
  int64_t next_virtual_uid_ = 1000;
  std::unordered_map<int64_t, size_t> tensor_index_;  // uid -> index in tensors_
  std::vector<Descriptor> tensors_;
  std::vector<Descriptor> ops_;
  std::vector<Descriptor> op_parts_;  // the pointwise/reduction/matmul descriptors of ops_
};

// Runs `plan` on `stream` with the data pointers of `uids` (by-value scalars: host addresses).
void execute(DeviceHandle& handle, const ExecutionPlan& plan, void* stream,
             const std::vector<int64_t>& uids, const std::vector<void*>& pointers, void* workspace);

}  // namespace zt::kernels::cuda::cudnn
