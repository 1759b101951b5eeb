// Safetensors and hf_model with tensors on a GPU: reads (whole, rows, converted) land the same
// bytes as host reads, writes from device tensors give the same file as from host tensors, on a
// non-default stream. Each test skips without a GPU.
#include <gtest/gtest.h>

#include "io/fake_model.h"
#include "io/io_test_util.h"
#include "support/test_util.h"
#include "zerotrain/core/stream.h"
#include "zerotrain/io/hf_model.h"
#include "zerotrain/io/safetensors.h"

namespace zt::io {
namespace {

using test::expect_bitwise_equal;
using test::TempDir;

TEST(SafetensorsCuda, ReadsOntoTheGpu) {
  ZT_SKIP_WITHOUT_CUDA();
  TempDir dir;
  const Device gpu = Device::cuda(0);
  CudaStream stream(gpu);
  write_safetensors(dir / "t.safetensors", {{"w", test::random_tensor({37, 29}, DType::f32, 1)},
                                            {"h", test::random_tensor({1000}, DType::bf16, 2)},
                                            {"ids", test::random_any({17}, DType::i64, 3)}});
  SafetensorsReader r(dir / "t.safetensors");
  for (DType to : {DType::f32, DType::bf16, DType::f16}) {
    for (const char* name : {"w", "h"}) {
      Tensor got = r.read(name, to, gpu, stream);
      synchronize(stream);
      expect_bitwise_equal(r.read(name, to), got, str(name, " as ", dtype_name(to)));
    }
    Tensor rows = Tensor::empty({5, 29}, to, gpu, stream);
    r.read_rows("w", 30, 35, rows, stream);
    Tensor want = Tensor::empty({5, 29}, to);
    r.read_rows("w", 30, 35, want);
    synchronize(stream);
    expect_bitwise_equal(want, rows, str("rows as ", dtype_name(to)));
  }
  expect_bitwise_equal(r.read("ids", DType::i64), r.read("ids", DType::i64, gpu, stream), "ids");
}

TEST(SafetensorsCuda, WritesFromTheGpu) {
  ZT_SKIP_WITHOUT_CUDA();
  TempDir dir;
  const Device gpu = Device::cuda(0);
  CudaStream stream(gpu);
  const std::vector<NamedTensor> host = {{"a", test::random_tensor({64, 3}, DType::f32, 4)},
                                         {"b", test::random_tensor({5, 7}, DType::bf16, 5)},
                                         {"c", test::random_any({9}, DType::i32, 6)}};
  std::vector<NamedTensor> device;
  for (const NamedTensor& nt : host)
    device.push_back({nt.name, nt.tensor.to(gpu)});
  device[0].tensor = device[0].tensor.transpose(0, 1);  // strided on the device
  synchronize_device(gpu);  // the copies above ran on the default stream
  std::vector<NamedTensor> host_strided = host;
  host_strided[0].tensor = host_strided[0].tensor.transpose(0, 1);
  for (std::optional<DType> as : {std::optional<DType>{}, std::optional<DType>{DType::f16}}) {
    SafetensorsWriteOptions opt;
    opt.float_dtype = as;
    opt.stream = stream;
    write_safetensors(dir / "gpu.safetensors", device, opt);
    opt.stream = {};
    write_safetensors(dir / "cpu.safetensors", host_strided, opt);
    EXPECT_EQ(test::read_bytes(dir / "gpu.safetensors"), test::read_bytes(dir / "cpu.safetensors"));
  }
}

TEST(SafetensorsCuda, LoadPretrainedIntoGpuParameters) {
  ZT_SKIP_WITHOUT_CUDA();
  TempDir dir;
  const nn::ModelConfig cfg = test::tiny_llama();
  test::FakeModel src = test::make_fake_model(cfg, DType::f32, 21);
  save_pretrained(cfg, src.pointers(), dir.path(), DType::bf16);
  test::FakeModel dst = test::make_fake_model(cfg, DType::bf16, 0, true);
  for (nn::Parameter& p : dst.params)
    p.value = p.value.to(Device::cuda(0));
  load_pretrained(cfg, dst.pointers(), dir.path(), {}, nullptr);
  test::FakeModel host = test::make_fake_model(cfg, DType::bf16, 0, true);
  load_pretrained(cfg, host.pointers(), dir.path(), {}, nullptr);
  for (size_t i = 0; i < host.params.size(); ++i)
    expect_bitwise_equal(host.params[i].value, dst.params[i].value, host.params[i].name);
}

}  // namespace
}  // namespace zt::io
