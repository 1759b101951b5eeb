// comm/self_communicator and the one-process ProcessGroup: collectives over one rank are copies,
// on host buffers or a GPU's (skips without one); argument errors (a stream of another device)
// are typed.
#include <gtest/gtest.h>

#include <vector>

#include "support/test_util.h"
#include "zerotrain/comm/process_group.h"
#include "zerotrain/comm/self_communicator.h"
#include "zerotrain/core/error.h"
#include "zerotrain/core/tensor.h"

namespace zt::comm {
namespace {

TEST(SelfCommunicator, CollectivesCopy) {
  SelfCommunicator c(10.0);
  EXPECT_EQ(c.rank(), 0);
  EXPECT_EQ(c.size(), 1);
  std::vector<float> in = {1.5f, -2.f, 3.f}, out(3);
  c.all_reduce(in.data(), out.data(), 3, DType::f32, ReduceOp::avg, Stream::host());
  EXPECT_EQ(out, in);
  std::vector<float> rs(3);
  c.reduce_scatter(in.data(), rs.data(), 3, DType::f32, ReduceOp::sum, Stream::host());
  EXPECT_EQ(rs, in);
  std::vector<float> ag(3);
  c.all_gather(in.data(), ag.data(), 3, DType::f32, Stream::host());
  EXPECT_EQ(ag, in);
  c.broadcast(in.data(), 3, DType::f32, 0, Stream::host());
  EXPECT_EQ(in, (std::vector<float>{1.5f, -2.f, 3.f}));
  EXPECT_EQ(c.split(-1, 0), nullptr);
  EXPECT_EQ(c.split(3, 0)->size(), 1);
}

TEST(SelfCommunicator, ArgumentErrors) {
  SelfCommunicator c(10.0);
  int32_t x = 1;
  EXPECT_THROW(c.all_reduce(&x, &x, 1, DType::i32, ReduceOp::avg, Stream::host()), DTypeError);
  EXPECT_THROW(c.broadcast(&x, 1, DType::i32, 1, Stream::host()), ValueError);
  Stream gpu{Device::cuda(0), nullptr};
  EXPECT_THROW(c.all_gather(&x, &x, 1, DType::i32, gpu), DeviceError);
}

TEST(SelfCommunicator, DeviceOneRejectsOtherStreams) {
  SelfCommunicator c(10.0, Device::cuda(0));
  int32_t x = 1;
  EXPECT_THROW(c.all_gather(&x, &x, 1, DType::i32, Stream::host()), DeviceError);
  EXPECT_THROW(c.broadcast(&x, 1, DType::i32, 0, Stream{Device::cuda(1), nullptr}), DeviceError);
  EXPECT_EQ(c.split(0, 0)->size(), 1);
}

TEST(SelfCommunicator, CopiesDeviceBuffers) {
  ZT_SKIP_WITHOUT_CUDA();
  const Device gpu = Device::cuda(0);
  const Stream stream = Stream::default_for(gpu);
  SelfCommunicator c(10.0, gpu);
  const Tensor src = Tensor::from_floats({1.f, 2.f, 3.f}, {3}, DType::f32).to(gpu, stream);
  Tensor dst = Tensor::zeros({3}, DType::f32, gpu, stream);
  c.all_gather(src.data(), dst.data(), 3, DType::f32, stream);
  EXPECT_EQ(dst.to_floats(stream), (std::vector<float>{1.f, 2.f, 3.f}));
  Tensor sum = Tensor::zeros({3}, DType::f32, gpu, stream);
  c.all_reduce(src.data(), sum.data(), 3, DType::f32, ReduceOp::sum, stream);
  EXPECT_EQ(sum.to_floats(stream), (std::vector<float>{1.f, 2.f, 3.f}));
}

TEST(ProcessGroup, OneProcessWithoutLauncherUsesSelf) {
  ProcessGroup pg(ProcessGroupOptions{std::nullopt, EnvMap{}});
  EXPECT_EQ(pg.world_size(), 1);
  EXPECT_EQ(pg.timeout_seconds(), 600.0);
  ASSERT_TRUE(pg.has_host_communicator());
  EXPECT_EQ(pg.host().backend_name(), "self");
  EXPECT_EQ(pg.broadcast_bytes({1, 2, 3}), (std::vector<uint8_t>{1, 2, 3}));
}

TEST(ProcessGroup, TimeoutFromEnvAndOption) {
  ProcessGroup from_env(ProcessGroupOptions{std::nullopt, EnvMap{{"ZEROTRAIN_COMM_TIMEOUT", "7"}}});
  EXPECT_EQ(from_env.timeout_seconds(), 7.0);
  EXPECT_EQ(from_env.host().timeout_seconds(), 7.0);
  ProcessGroup from_option(ProcessGroupOptions{3.0, EnvMap{{"ZEROTRAIN_COMM_TIMEOUT", "7"}}});
  EXPECT_EQ(from_option.timeout_seconds(), 3.0);
  EXPECT_THROW(ProcessGroup(ProcessGroupOptions{0.0, EnvMap{}}), ValueError);
}

// A torchrun-style world joins MPI only when host() is first called (mpi_join.h); without
// MASTER_PORT its ranks have nowhere to meet, which host() says before touching MPI.
TEST(ProcessGroup, TorchrunStyleWorldHasNoHostCommunicatorUntilJoined) {
  ProcessGroup pg(ProcessGroupOptions{
      std::nullopt, EnvMap{{"RANK", "1"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "127.0.0.1"}}});
  EXPECT_EQ(pg.rank(), 1);
  EXPECT_FALSE(pg.has_host_communicator());
  try {
    pg.host();
    FAIL() << "expected ValueError";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("no MASTER_ADDR/MASTER_PORT to meet at"),
              std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(pg.has_host_communicator());
  // No MASTER_PORT: the rendezvous cannot happen.
  EXPECT_THROW(pg.broadcast_bytes({}), ValueError);
}

TEST(ProcessGroup, DeviceCommunicatorNeedsCudaBuild) {
  if (ZT_WITH_CUDA) GTEST_SKIP() << "CUDA build: covered by tests/mpi/test_nccl_communicator.cpp";
  ProcessGroup pg(ProcessGroupOptions{std::nullopt, EnvMap{}});
  EXPECT_THROW(pg.make_device_communicator(Device::cuda(0)), DeviceError);
}

}  // namespace
}  // namespace zt::comm
