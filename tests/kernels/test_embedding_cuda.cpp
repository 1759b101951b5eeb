// CUDA token embedding: lookup bit for bit against the CPU (word widths 2 to 16 bytes, i32/i64
// ids, vocab 128256); id checks with and without check_ids; the gradient bit for bit against the
// CPU kernel (both follow kernels/embedding_order.h) for heavily repeated ids, one id everywhere,
// real sizes (16384 tokens, 4096 wide, vocab 128256), run-to-run equality; out-of-range ids
// skipped by the CUDA gradient; device errors. Every test skips without a GPU.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kernels/reference_embedding.h"
#include "support/test_util.h"
#include "zerotrain/kernels/embedding.h"

namespace zt {
namespace {

using kernels::embedding_backward;
using kernels::embedding_forward;

constexpr DType kDTypes[] = {DType::f32, DType::f16, DType::bf16};

TEST(EmbeddingCuda, ForwardMatchesCpuBitwise) {
  ZT_SKIP_WITHOUT_CUDA();
  const Device g = Device::cuda(0);
  struct Case {
    int64_t v, c, n;
  };
  for (DType dt : kDTypes) {
    for (Case k : {Case{1000, 1, 333}, Case{1000, 33, 333}, Case{1000, 34, 100},
                   Case{1000, 36, 100}, Case{1000, 4096, 333}, Case{128256, 512, 16384}}) {
      for (DType it : {DType::i32, DType::i64}) {
        Tensor table = test::random_tensor({k.v, k.c}, dt, 1 + k.c);
        Tensor ids = test::random_ints({k.n}, it, 2 + k.c, 0, k.v);
        Tensor cpu = Tensor::empty({k.n, k.c}, dt), gpu = Tensor::empty({k.n, k.c}, dt, g);
        embedding_forward(ids, table, cpu);
        embedding_forward(ids.to(g), table.to(g), gpu);
        test::expect_bitwise_equal(
            cpu, gpu, str(dtype_name(dt), " [", k.v, ", ", k.c, "] ids ", dtype_name(it)));
      }
    }
  }
}

TEST(EmbeddingCuda, ChecksIdsOnlyWhenAsked) {
  ZT_SKIP_WITHOUT_CUDA();
  const Device g = Device::cuda(0);
  const int64_t v = 100, c = 64;
  Tensor table = test::random_tensor({v, c}, DType::bf16, 11, -1, 1, g);
  std::vector<int64_t> idv(300, 5);
  idv[7] = 100;   // first bad token
  idv[250] = -3;  // a later one
  Tensor ids = Tensor::from_ints(idv, {300}, DType::i64, g);
  Tensor out = Tensor::empty({300, c}, DType::bf16, g);
  out.fill(3.0);
  try {
    embedding_forward(ids, table, out, /*check_ids=*/true);
    ADD_FAILURE() << "expected ValueError";
  } catch (const ValueError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("[embedding_forward] ids[7] = 100 is out of range [0, 100)"),
              std::string::npos)
        << m;
  }
  out.fill(3.0);
  EXPECT_NO_THROW(embedding_forward(ids, table, out, /*check_ids=*/false));
  const auto of = out.to_floats(), tf = table.to_floats();
  for (int64_t j = 0; j < c; ++j) {
    EXPECT_EQ(of[static_cast<size_t>(7 * c + j)], 0.0f);
    EXPECT_EQ(of[static_cast<size_t>(250 * c + j)], 0.0f);
    EXPECT_EQ(of[static_cast<size_t>(j)], tf[static_cast<size_t>(5 * c + j)]);
  }
}

// dtable (dtype gt, random start) += gradient of dout by ids, on the CPU and on the GPU.
void expect_backward_matches_cpu(const std::vector<int64_t>& idv, int64_t v, int64_t c, DType dt,
                                 DType gt, bool random_start, const std::string& what) {
  const Device g = Device::cuda(0);
  const int64_t n = static_cast<int64_t>(idv.size());
  Tensor ids = Tensor::from_ints(idv, {n}, DType::i32);
  Tensor dout = test::random_tensor({n, c}, dt, 21 + c);
  Tensor cpu = random_start ? test::random_tensor({v, c}, gt, 22 + c) : Tensor::zeros({v, c}, gt);
  Tensor gpu = cpu.to(g);
  embedding_backward(ids.to(g), dout.to(g), gpu);
  embedding_backward(ids, dout, cpu);
  test::expect_bitwise_equal(cpu, gpu, what);
}

TEST(EmbeddingCuda, BackwardMatchesCpuBitwise) {
  ZT_SKIP_WITHOUT_CUDA();
  for (DType dt : kDTypes) {
    for (DType gt : {DType::f32, dt}) {
      for (int64_t c : {1, 33, 256, 4096}) {
        const std::string what = str("dout ", dtype_name(dt), " dtable ", dtype_name(gt), " c ", c);
        expect_backward_matches_cpu(test::repeated_ids(3000, 1000, 31 + c), 1000, c, dt, gt, true,
                                    what + " repeated ids");
        expect_backward_matches_cpu(std::vector<int64_t>(700, 9), 20, c, dt, gt, true,
                                    what + " one id");
      }
    }
  }
}

TEST(EmbeddingCuda, BackwardRealSizes) {
  ZT_SKIP_WITHOUT_CUDA();
  const int64_t n = 16384, v = 128256;
  const std::vector<int64_t> random = test::random_ints({n}, DType::i64, 41, 0, v).to_ints();
  expect_backward_matches_cpu(random, v, 256, DType::bf16, DType::f32, false,
                              "random ids, vocab 128256");
  expect_backward_matches_cpu(test::repeated_ids(n, v, 42), v, 4096, DType::bf16, DType::bf16,
                              false, "16384 repeated ids, 4096 wide, vocab 128256");
}

TEST(EmbeddingCuda, BackwardRepeatsBitwise) {
  ZT_SKIP_WITHOUT_CUDA();
  const Device g = Device::cuda(0);
  const int64_t n = 8192, v = 5000, c = 2048;
  Tensor ids = Tensor::from_ints(test::repeated_ids(n, v, 51), {n}, DType::i64, g);
  Tensor dout = test::random_tensor({n, c}, DType::bf16, 52, -1, 1, g);
  Tensor a = Tensor::zeros({v, c}, DType::f32, g), b = Tensor::zeros({v, c}, DType::f32, g);
  embedding_backward(ids, dout, a);
  embedding_backward(ids, dout, b);
  test::expect_bitwise_equal(a, b, "two runs");
}

TEST(EmbeddingCuda, BackwardSkipsOutOfRangeIds) {
  ZT_SKIP_WITHOUT_CUDA();
  const Device g = Device::cuda(0);
  const int64_t v = 50, c = 40, n = 200;
  std::vector<int64_t> idv = test::repeated_ids(n, v, 61);
  idv[3] = v;
  idv[100] = -1;
  idv[150] = 1000;
  Tensor dout = test::random_tensor({n, c}, DType::f32, 62);
  Tensor dtable = test::random_tensor({v, c}, DType::f32, 63);
  std::vector<int64_t> valid;
  std::vector<double> ref = test::to_doubles(dtable), dd = test::to_doubles(dout), kept;
  for (int64_t t = 0; t < n; ++t) {
    if (idv[static_cast<size_t>(t)] < 0 || idv[static_cast<size_t>(t)] >= v) continue;
    valid.push_back(idv[static_cast<size_t>(t)]);
    kept.insert(kept.end(), dd.begin() + t * c, dd.begin() + (t + 1) * c);
  }
  ref = test::embedding_backward_ref(valid, kept, ref, c);
  Tensor gpu = dtable.to(g);
  embedding_backward(Tensor::from_ints(idv, {n}, DType::i64, g), dout.to(g), gpu);
  test::expect_close(ref, gpu, {5e-5, 1e-5}, "bad ids skipped");
}

TEST(EmbeddingCuda, MixedDevicesThrow) {
  ZT_SKIP_WITHOUT_CUDA();
  Tensor ids = Tensor::from_ints({0, 1}, {2}, DType::i32, Device::cuda(0));
  Tensor table = test::random_tensor({4, 8}, DType::bf16, 71);
  Tensor out = Tensor::empty({2, 8}, DType::bf16, Device::cuda(0));
  try {
    embedding_forward(ids, table, out);
    ADD_FAILURE() << "expected DeviceError";
  } catch (const DeviceError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("[embedding_forward]"), std::string::npos) << m;
    EXPECT_NE(m.find("table bf16[4, 8] on cpu"), std::string::npos) << m;
    EXPECT_NE(m.find("ids i32[2] on cuda:0"), std::string::npos) << m;
  }
}

}  // namespace
}  // namespace zt
