// CUDA GEMM through cuBLASLt. Row-major C[M, N] = op(A) op(B) is computed as the column-major
// product C^T = op(B)^T op(A)^T, so cuBLASLt's A is our b and its B is our a, with no copies.
// Accumulation and scaling are f32 (CUBLAS_COMPUTE_32F, no TF32); the bias is the BIAS epilogue.
// Plans are cached per problem (cublaslt_handle.h), so a repeated call only sets the bias pointer
// and queues the matmul. K == 0 is a small kernel: C = beta * C + bias.
// Tested by tests/kernels/test_gemm_cuda.cpp against a float64 reference.
#include "zerotrain/kernels/cuda/gemm.h"

#include <cstdint>

#include "zerotrain/core/cuda/cuda_check.h"
#include "zerotrain/core/cuda/dispatch.cuh"
#include "zerotrain/kernels/cuda/cublaslt_handle.h"

namespace zt::kernels::cuda {

namespace {

cudaDataType_t cuda_type(DType d) {
  switch (d) {
    case DType::f32:
      return CUDA_R_32F;
    case DType::f16:
      return CUDA_R_16F;
    case DType::bf16:
      return CUDA_R_16BF;
    default:
      throw DTypeError("gemm", str("no cuBLASLt type for ", dtype_name(d)));
  }
}

// The largest power of two (at most 16) dividing the address; 0 for nullptr.
uint8_t alignment_of(const void* p) {
  if (!p) return 0;
  const auto addr = reinterpret_cast<uintptr_t>(p);
  uint8_t a = 16;
  while (a > 1 && addr % a != 0)
    a = static_cast<uint8_t>(a / 2);
  return a;
}

std::string describe_key(const GemmKey& k) {
  return str("M=", k.m, " N=", k.n, " K=", k.k, " trans_a=", k.trans_a, " trans_b=", k.trans_b,
             " a/b ", dtype_name(k.ab), " c ", dtype_name(k.c), k.bias ? " with bias" : "",
             " (alignment a ", int{k.align_a}, ", b ", int{k.align_b}, ", c ", int{k.align_c},
             ", bias ", int{k.align_bias}, " bytes)");
}

template <typename T>
void set_desc(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attr, const T& value) {
  ZT_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc, attr, &value, sizeof(value)));
}

template <typename T>
void set_pref(cublasLtMatmulPreference_t pref, cublasLtMatmulPreferenceAttributes_t attr,
              const T& value) {
  ZT_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, attr, &value, sizeof(value)));
}

// Column-major layout of a row-major [rows, cols] matrix: cols x rows with leading dimension cols.
cublasLtMatrixLayout_t make_layout(DType dtype, int64_t rows, int64_t cols) {
  cublasLtMatrixLayout_t layout = nullptr;
  ZT_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&layout, cuda_type(dtype), static_cast<uint64_t>(cols),
                                             static_cast<uint64_t>(rows), cols));
  return layout;
}

struct Preference {
  cublasLtMatmulPreference_t p = nullptr;
  Preference() { ZT_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&p)); }
  ~Preference() { cublasLtMatmulPreferenceDestroy(p); }
  Preference(const Preference&) = delete;
  Preference& operator=(const Preference&) = delete;
};

// Descriptors for `key` and the heuristic's first algorithm. `bias` is the call's bias pointer: the
// heuristic reads its alignment from the value.
std::unique_ptr<GemmPlan> build_plan(cublasLtHandle_t handle, const GemmKey& key,
                                     const void* bias) {
  auto plan = std::make_unique<GemmPlan>();
  ZT_CUBLAS_CHECK(cublasLtMatmulDescCreate(&plan->desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  // cuBLASLt's A is our b: row-major [K, N] (or [N, K] with trans_b) and used transposed exactly
  // when b is; likewise its B is our a.
  set_desc(plan->desc, CUBLASLT_MATMUL_DESC_TRANSA, key.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N);
  set_desc(plan->desc, CUBLASLT_MATMUL_DESC_TRANSB, key.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N);
  if (key.bias) {
    set_desc(plan->desc, CUBLASLT_MATMUL_DESC_EPILOGUE, CUBLASLT_EPILOGUE_BIAS);
    set_desc(plan->desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE,
             static_cast<int32_t>(cuda_type(key.c)));
    set_desc(plan->desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, bias);
  }
  plan->layout_a =
      key.trans_b ? make_layout(key.ab, key.n, key.k) : make_layout(key.ab, key.k, key.n);
  plan->layout_b =
      key.trans_a ? make_layout(key.ab, key.k, key.m) : make_layout(key.ab, key.m, key.k);
  plan->layout_c = make_layout(key.c, key.m, key.n);

  Preference pref;
  set_pref(pref.p, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
           uint64_t{CublasLtHandle::kWorkspaceBytes});
  set_pref(pref.p, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, uint32_t{key.align_b});
  set_pref(pref.p, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, uint32_t{key.align_a});
  set_pref(pref.p, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, uint32_t{key.align_c});
  set_pref(pref.p, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, uint32_t{key.align_c});

  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  ZT_CUBLAS_CHECK(cublasLtMatmulAlgoGetHeuristic(handle, plan->desc, plan->layout_a, plan->layout_b,
                                                 plan->layout_c, plan->layout_c, pref.p, 1, &result,
                                                 &found));
  if (found == 0)
    throw BackendError("gemm", str("cuBLASLt has no algorithm for ", describe_key(key)));
  plan->algo = result.algo;
  return plan;
}

// K == 0: c[M, N] = beta * c + bias[N] (c is not read when beta == 0).
template <typename T>
__global__ void empty_product_kernel(T* __restrict__ c, const T* __restrict__ bias, long long m,
                                     long long n, float beta) {
  const long long total = m * n;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    float v = beta == 0.0f ? 0.0f : beta * zt::dev::to_f(c[i]);
    if (bias) v += zt::dev::to_f(bias[i % n]);
    c[i] = zt::dev::from_f<T>(v);
  }
}

void empty_product(Tensor& c, const Tensor* bias, float beta, Stream stream) {
  const long long m = c.size(0), n = c.size(1);
  constexpr int threads = 256;
  ZT_DISPATCH_FLOAT(c.dtype(), "gemm", T, {
    empty_product_kernel<T><<<zt::dev::blocks_for(m * n, threads), threads, 0, to_cuda(stream)>>>(
        static_cast<T*>(c.data()), bias ? static_cast<const T*>(bias->data()) : nullptr, m, n,
        beta);
    ZT_CUDA_CHECK_LAUNCH();
  });
}

}  // namespace

void gemm(const Tensor& a, const Tensor& b, Tensor& c, const GemmOptions& opt, Stream stream) {
  const int64_t m = c.size(0), n = c.size(1);
  const int64_t k = opt.trans_a ? a.size(0) : a.size(1);
  if (m == 0 || n == 0) return;
  CudaDeviceGuard guard(c.device());
  if (k == 0) {
    empty_product(c, opt.bias, opt.beta, stream);
    return;
  }

  const void* bias = opt.bias ? opt.bias->data() : nullptr;
  GemmKey key;
  key.m = m;
  key.n = n;
  key.k = k;
  key.trans_a = opt.trans_a;
  key.trans_b = opt.trans_b;
  key.bias = opt.bias != nullptr;
  key.ab = a.dtype();
  key.c = c.dtype();
  key.align_a = alignment_of(a.data());
  key.align_b = alignment_of(b.data());
  key.align_c = alignment_of(c.data());
  key.align_bias = alignment_of(bias);

  CublasLtHandle& lt = CublasLtHandle::for_device(c.device());
  GemmPlan* plan = lt.find_plan(key);
  if (!plan) plan = &lt.add_plan(key, build_plan(lt.get(), key, bias));
  void* workspace = lt.workspace(stream);

  std::unique_lock<std::mutex> bias_lock;
  if (key.bias) {
    bias_lock = std::unique_lock<std::mutex>(plan->bias_mu);
    set_desc(plan->desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, bias);
  }
  ZT_CUBLAS_CHECK(cublasLtMatmul(lt.get(), plan->desc, &opt.alpha, b.data(), plan->layout_a,
                                 a.data(), plan->layout_b, &opt.beta, c.data(), plan->layout_c,
                                 c.data(), plan->layout_c, &plan->algo, workspace,
                                 CublasLtHandle::kWorkspaceBytes, to_cuda(stream)));
}

}  // namespace zt::kernels::cuda
