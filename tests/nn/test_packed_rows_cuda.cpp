// Packed rows ([Note: packed documents] in nn/row_documents.h) on CUDA against the CPU (skipped
// without a GPU): every family's f32 loss and gradients of two rows, each packing documents that
// cross the attention kernels' tiles, with the same documents and restarted positions on both
// devices. Head size 32 (a size the CUDA attention kernels are built for).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/reference_attention.h"
#include "nn/nn_test_util.h"
#include "support/test_util.h"
#include "zerotrain/nn/row_documents.h"
#include "zerotrain/nn/transformer.h"

namespace zt {
namespace {

const Device kGpu = Device::cuda(0);

TEST(PackedRowsCuda, MatchesCpuF32) {
  ZT_SKIP_WITHOUT_CUDA();
  const int64_t S = 96;
  const Tensor starts = Tensor::from_ints(test::packed_doc_starts({{1, 40, 55}, {70, 3, 23}}),
                                          {2, S}, DType::i32);
  for (nn::Family f : test::all_families()) {
    nn::ModelConfig c = test::tiny_cuda_config(f);
    c.max_position_embeddings = std::max<int64_t>(c.max_position_embeddings, S);
    nn::Transformer cpu(c, {}), gpu(c, {.device = kGpu});
    test::randomize(cpu.parameters(), 12);
    test::set_values(gpu.parameters(), test::values_of(cpu.parameters()));
    synchronize_device(kGpu);
    nn::StepContext on_cpu = test::make_step(c, 2, S, 6);
    on_cpu.documents = nn::row_documents(starts, Device::cpu());
    nn::StepContext on_gpu = test::make_step(c, 2, S, 6, DType::f32, kGpu);
    on_gpu.documents = nn::row_documents(starts, kGpu);
    const double loss_cpu = test::model_loss_and_grads(cpu, on_cpu);
    const double loss_gpu = test::model_loss_and_grads(gpu, on_gpu);
    EXPECT_NEAR(loss_gpu, loss_cpu, 1e-5 * std::fabs(loss_cpu)) << nn::family_name(f);
    EXPECT_LT(test::relative_l2(test::grads_of(gpu.parameters()), test::grads_of(cpu.parameters())),
              1e-4)
        << nn::family_name(f);
    // The documents matter on the device too.
    nn::StepContext unpacked = test::make_step(c, 2, S, 6, DType::f32, kGpu);
    EXPECT_GT(std::fabs(test::model_loss(gpu, unpacked) - loss_gpu), 1e-4 * std::fabs(loss_gpu))
        << nn::family_name(f);
  }
}

}  // namespace
}  // namespace zt
