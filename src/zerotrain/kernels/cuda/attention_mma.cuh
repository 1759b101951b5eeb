// Tensor-core building blocks shared by the f16/bf16 attention kernels: mma.sync m16n8k16 with f32
// accumulation, ldmatrix fragment loads, cp.async tile copies, and the masking rule.
//
// [Note: mma fragments] For lane l, g = l / 4 and t = l % 4. An m16n8 f32 accumulator c[4] holds
// (row g, cols 2t, 2t+1) in c[0..1] and (row g + 8, same cols) in c[2..3]. An A operand (16 x 16,
// row-major) a[4] holds rows g / g+8 and cols 2t..2t+1 / 2t+8..2t+9 as a0 (g, lo), a1 (g+8, lo),
// a2 (g, hi), a3 (g+8, hi). A B operand (16 x 8, k x n) b[2] holds k = 2t..2t+1 (b0) and
// 2t+8..2t+9 (b1) at column n = g. So two neighbouring accumulator tiles (n-tiles 2kk, 2kk+1) of a
// product become the A operand of the next product over k-step kk without moving data between
// lanes.
//
// Shared-memory tiles are row-major with a row pitch of D + 8 elements (16 bytes of padding), which
// puts the 8 rows read by one ldmatrix phase on distinct banks for every supported D.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

#include "zerotrain/core/dtype.h"
#include "zerotrain/core/error.h"

namespace zt::kernels::cuda::attn {

constexpr float kLog2e = 1.4426950408889634f;
constexpr float kLn2 = 0.6931471805599453f;

template <int D>
struct HeadDim {
  static_assert(D % 16 == 0 && D >= 32 && D <= 128,
                "head dim must be a multiple of 16 in [32, 128]");
  static constexpr int kPitch = D + 8;    // smem row pitch (elements)
  static constexpr int kChunks = D / 8;   // 16-byte chunks per row
  static constexpr int kKSteps = D / 16;  // k-steps of a product over D
  static constexpr int kNTiles = D / 8;   // n8 tiles of a product into D columns
};

__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// 16-byte global -> shared copy; zero-fills the destination when !valid (src is then not read).
__device__ __forceinline__ void cp_async_16(void* smem, const void* gmem, bool valid) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr(smem)), "l"(gmem),
               "r"(valid ? 16 : 0));
}
// 4-byte global -> shared copy (through L1); zero-fills when !valid.
__device__ __forceinline__ void cp_async_4(void* smem, const void* gmem, bool valid) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(smem_addr(smem)), "l"(gmem),
               "r"(valid ? 4 : 0));
}
__device__ __forceinline__ void cp_async_commit() {
  asm volatile("cp.async.commit_group;\n" ::);
}
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

// Four 8x8 b16 matrices; lane l supplies the address of row l % 8 of matrix l / 8.
__device__ __forceinline__ void ldmatrix_x4(uint32_t r[4], const void* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr(p)));
}
__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t r[4], const void* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr(p)));
}

// A operand: rows [r0, r0 + 16) x cols [c0, c0 + 16) of a row-major tile.
template <typename T, int Pitch>
__device__ __forceinline__ void load_a(uint32_t a[4], const T* tile, int r0, int c0, int lane) {
  const int m = lane >> 3, r = lane & 7;
  ldmatrix_x4(a, tile + (r0 + r + (m & 1) * 8) * Pitch + c0 + (m >> 1) * 8);
}

// B operands of two n-tiles from a tile stored [n][k] (B = tile^T): n in [n0, n0 + 16),
// k in [k0, k0 + 16). b[0..1] is n-tile n0, b[2..3] is n-tile n0 + 8.
template <typename T, int Pitch>
__device__ __forceinline__ void load_b_nk(uint32_t b[4], const T* tile, int n0, int k0, int lane) {
  const int m = lane >> 3, r = lane & 7;
  ldmatrix_x4(b, tile + (n0 + r + (m >> 1) * 8) * Pitch + k0 + (m & 1) * 8);
}

// B operands of two n-tiles from a tile stored [k][n] (B = tile): k in [k0, k0 + 16),
// n in [n0, n0 + 16). b[0..1] is n-tile n0, b[2..3] is n-tile n0 + 8.
template <typename T, int Pitch>
__device__ __forceinline__ void load_b_kn(uint32_t b[4], const T* tile, int k0, int n0, int lane) {
  const int m = lane >> 3, r = lane & 7;
  ldmatrix_x4_trans(b, tile + (k0 + r + (m & 1) * 8) * Pitch + n0 + (m >> 1) * 8);
}

// c += a * b on one m16n8k16 tile.
template <typename T>
__device__ __forceinline__ void mma(float c[4], const uint32_t a[4], const uint32_t* b);

template <>
__device__ __forceinline__ void mma<__nv_bfloat16>(float c[4], const uint32_t a[4],
                                                   const uint32_t* b) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "{%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
template <>
__device__ __forceinline__ void mma<__half>(float c[4], const uint32_t a[4], const uint32_t* b) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "{%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// Two floats as one register of two 16-bit values (lo in the low half).
template <typename T>
__device__ __forceinline__ uint32_t pack2(float lo, float hi);
template <>
__device__ __forceinline__ uint32_t pack2<__nv_bfloat16>(float lo, float hi) {
  __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<uint32_t*>(&v);
}
template <>
__device__ __forceinline__ uint32_t pack2<__half>(float lo, float hi) {
  __half2 v = __floats2half2_rn(lo, hi);
  return *reinterpret_cast<uint32_t*>(&v);
}

// The A operand of k-step kk from accumulator tiles acc[2kk], acc[2kk + 1] (see the note).
template <typename T>
__device__ __forceinline__ void acc_to_a(uint32_t a[4], const float lo[4], const float hi[4]) {
  a[0] = pack2<T>(lo[0], lo[1]);
  a[1] = pack2<T>(lo[2], lo[3]);
  a[2] = pack2<T>(hi[0], hi[1]);
  a[3] = pack2<T>(hi[2], hi[3]);
}

// Copies rows [row0, row0 + Rows) of a [S, ld] global matrix (row stride `ld` elements, D columns)
// into a smem tile of pitch D + 8; rows at or past S are zero-filled. All Threads threads call it.
template <typename T, int D, int Rows, int Threads>
__device__ __forceinline__ void load_tile(T* tile, const T* g, int64_t ld, int row0, int S,
                                          int tid) {
  using HD = HeadDim<D>;
  for (int c = tid; c < Rows * HD::kChunks; c += Threads) {
    const int r = c / HD::kChunks, ch = c - r * HD::kChunks;
    const int row = row0 + r;
    const bool valid = row < S;
    const T* src = valid ? g + row * ld + ch * 8 : g;
    cp_async_16(tile + r * HD::kPitch + ch * 8, src, valid);
  }
}

// Query i sees key j iff j <= i and (window == 0 or i - j < window).
__device__ __forceinline__ bool visible(int i, int j, int window) {
  return j <= i && (window == 0 || i - j < window);
}

// Packed rows: key j lies before the document of query i of row b (never when doc_starts is null,
// nor for the padding rows i >= S of a last tile).
__device__ __forceinline__ bool before_document(const int* doc_starts, int b, int S, int i, int j) {
  return doc_starts != nullptr && i < S && j < doc_starts[static_cast<int64_t>(b) * S + i];
}

// 2^x on the special-function unit (2^-inf = 0).
__device__ __forceinline__ float fast_exp2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}

// Runs f(std::integral_constant<int, D>{}) for a supported head dim.
template <typename F>
void with_head_dim(const char* op, int d, F&& f) {
  switch (d) {
    case 32:
      f(std::integral_constant<int, 32>{});
      break;
    case 64:
      f(std::integral_constant<int, 64>{});
      break;
    case 80:
      f(std::integral_constant<int, 80>{});
      break;
    case 96:
      f(std::integral_constant<int, 96>{});
      break;
    case 128:
      f(std::integral_constant<int, 128>{});
      break;
    default:
      throw ValueError(op, str("head dim D=", d, " is not supported on CUDA"));
  }
}

// Runs f(T{}) with T = __half or __nv_bfloat16.
template <typename F>
void with_half_type(const char* op, DType dt, F&& f) {
  switch (dt) {
    case DType::f16:
      f(__half{});
      break;
    case DType::bf16:
      f(__nv_bfloat16{});
      break;
    default:
      throw DTypeError(op, str("tensor-core attention takes f16 or bf16, got ", dtype_name(dt)));
  }
}

}  // namespace zt::kernels::cuda::attn
