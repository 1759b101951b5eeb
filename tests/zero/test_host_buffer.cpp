// host_buffer (zero/host_buffer.h): ordinary memory without a pin key or without a GPU; with a GPU,
// page-locked memory, and when the OS refuses it (simulated), ordinary memory and one warning per
// key that names it.
#include <gtest/gtest.h>

#include <string>

#include "zerotrain/core/allocator.h"
#include "zerotrain/zero/host_buffer.h"

namespace zt::zero {
namespace {

size_t count(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1))
    ++n;
  return n;
}

TEST(HostBuffer, OrdinaryMemoryWithoutAPinKey) {
  testing::internal::CaptureStderr();
  const Tensor t = host_buffer(1000, DType::bf16, "");
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
  EXPECT_EQ(t.device(), Device::cpu());
  EXPECT_EQ(t.numel(), 1000);
  EXPECT_EQ(t.dtype(), DType::bf16);
}

TEST(HostBufferCuda, RefusedPageLockedMemoryFallsBackWithOneLinePerKey) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: nothing is page-locked";
  refuse_pinned_memory_for_tests(true);
  testing::internal::CaptureStderr();
  const Tensor a = host_buffer(1024, DType::f32, "offload_optimizer.pin_memory");
  const Tensor b = host_buffer(4096, DType::bf16, "offload_optimizer.pin_memory");
  const Tensor c = host_buffer(16, DType::f32, "offload_param.pin_memory");
  const std::string err = testing::internal::GetCapturedStderr();
  refuse_pinned_memory_for_tests(false);
  for (const Tensor* t : {&a, &b, &c}) {
    EXPECT_EQ(t->device(), Device::cpu());
    EXPECT_TRUE(t->defined());
  }
  EXPECT_EQ(count(err, "\n"), 2u) << err;
  EXPECT_EQ(count(err, "[memory] warning: page-locked host memory refused"), 2u) << err;
  EXPECT_EQ(count(err, "offload_optimizer.pin_memory falls back to pageable memory"), 1u) << err;
  EXPECT_EQ(count(err, "offload_param.pin_memory falls back to pageable memory"), 1u) << err;
  // Granted again: page-locked, without a word.
  testing::internal::CaptureStderr();
  const Tensor d = host_buffer(1024, DType::f32, "offload_optimizer.pin_memory");
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
  EXPECT_EQ(d.device(), Device::cpu());
}

}  // namespace
}  // namespace zt::zero
