// comm/process_env: launcher variables -> rank, world, local rank, with fake environment maps.
#include <gtest/gtest.h>

#include "zerotrain/comm/process_env.h"
#include "zerotrain/core/error.h"

namespace zt::comm {
namespace {

TEST(ProcessEnv, NoLauncherIsOneProcess) {
  ProcessEnv p = detect_process_env(EnvMap{{"HOME", "/root"}});
  EXPECT_EQ(p.source, LaunchSource::single);
  EXPECT_EQ(p.rank, 0);
  EXPECT_EQ(p.world_size, 1);
  EXPECT_EQ(p.local_rank, 0);
  EXPECT_TRUE(p.master_addr.empty());
  EXPECT_EQ(p.master_port, 0);
}

TEST(ProcessEnv, OpenMpi) {
  ProcessEnv p = detect_process_env(EnvMap{{"OMPI_COMM_WORLD_RANK", "5"},
                                           {"OMPI_COMM_WORLD_SIZE", "8"},
                                           {"OMPI_COMM_WORLD_LOCAL_RANK", "1"}});
  EXPECT_EQ(p.source, LaunchSource::openmpi);
  EXPECT_EQ(p.rank, 5);
  EXPECT_EQ(p.world_size, 8);
  EXPECT_EQ(p.local_rank, 1);
}

TEST(ProcessEnv, Slurm) {
  ProcessEnv p = detect_process_env(EnvMap{{"SLURM_PROCID", "3"},
                                           {"SLURM_NTASKS", "4"},
                                           {"SLURM_LOCALID", "3"},
                                           {"MASTER_ADDR", "node7"},
                                           {"MASTER_PORT", "29500"}});
  EXPECT_EQ(p.source, LaunchSource::slurm);
  EXPECT_EQ(p.rank, 3);
  EXPECT_EQ(p.world_size, 4);
  EXPECT_EQ(p.local_rank, 3);
  EXPECT_EQ(p.master_addr, "node7");
  EXPECT_EQ(p.master_port, 29500);
}

TEST(ProcessEnv, TorchrunStyle) {
  ProcessEnv p = detect_process_env(EnvMap{{"RANK", "2"},
                                           {"WORLD_SIZE", "3"},
                                           {"LOCAL_RANK", "0"},
                                           {"MASTER_ADDR", "127.0.0.1"},
                                           {"MASTER_PORT", "1234"}});
  EXPECT_EQ(p.source, LaunchSource::torchrun);
  EXPECT_EQ(p.rank, 2);
  EXPECT_EQ(p.world_size, 3);
  EXPECT_EQ(p.local_rank, 0);
  EXPECT_EQ(p.master_addr, "127.0.0.1");
  EXPECT_EQ(p.master_port, 1234);
}

TEST(ProcessEnv, PrecedenceOpenMpiThenTorchrunThenSlurm) {
  EnvMap env{{"SLURM_PROCID", "1"}, {"SLURM_NTASKS", "2"}, {"RANK", "3"}, {"WORLD_SIZE", "4"}};
  EXPECT_EQ(detect_process_env(env).source, LaunchSource::torchrun);
  EXPECT_EQ(detect_process_env(env).rank, 3);
  env["OMPI_COMM_WORLD_RANK"] = "0";
  env["OMPI_COMM_WORLD_SIZE"] = "1";
  EXPECT_EQ(detect_process_env(env).source, LaunchSource::openmpi);
  EXPECT_EQ(detect_process_env(env).rank, 0);
}

TEST(ProcessEnv, LocalRankDefaultsToRank) {
  ProcessEnv p = detect_process_env(EnvMap{{"RANK", "1"}, {"WORLD_SIZE", "2"}});
  EXPECT_EQ(p.local_rank, 1);
}

void expect_value_error(const EnvMap& env, const std::string& fragment) {
  try {
    detect_process_env(env);
    FAIL() << "expected ValueError mentioning " << fragment;
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).rfind("[comm] ", 0), 0u) << e.what();
  }
}

TEST(ProcessEnv, BadValuesNameTheVariable) {
  expect_value_error({{"RANK", "two"}, {"WORLD_SIZE", "4"}},
                     "RANK: expected an integer >= 0, got \"two\"");
  expect_value_error({{"RANK", "1"}, {"WORLD_SIZE", "0"}}, "WORLD_SIZE: expected an integer >= 1");
  expect_value_error({{"RANK", "4"}, {"WORLD_SIZE", "4"}}, "RANK=4 is not below WORLD_SIZE=4");
  expect_value_error({{"RANK", "1"}}, "RANK is set but WORLD_SIZE is not");
  expect_value_error({{"OMPI_COMM_WORLD_RANK", "-1"}, {"OMPI_COMM_WORLD_SIZE", "2"}},
                     "OMPI_COMM_WORLD_RANK");
  expect_value_error({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "2x"}}, "SLURM_NTASKS");
  expect_value_error({{"RANK", "1"}, {"WORLD_SIZE", "2"}, {"LOCAL_RANK", "2"}},
                     "LOCAL_RANK=2 is above RANK=1");
  expect_value_error({{"MASTER_PORT", "70000"}}, "MASTER_PORT");
  expect_value_error({{"MASTER_PORT", "port"}}, "MASTER_PORT");
}

TEST(ProcessEnv, CommTimeout) {
  EXPECT_EQ(comm_timeout_seconds(EnvMap{}), 600.0);
  EXPECT_EQ(comm_timeout_seconds(EnvMap{{"ZEROTRAIN_COMM_TIMEOUT", "2.5"}}), 2.5);
  for (const char* bad : {"0", "-3", "soon", "", "inf"})
    EXPECT_THROW(comm_timeout_seconds(EnvMap{{"ZEROTRAIN_COMM_TIMEOUT", bad}}), ValueError) << bad;
}

}  // namespace
}  // namespace zt::comm
