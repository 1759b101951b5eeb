// Accelerate config files (zerotrain/config/accelerate_config.h, accelerate_ds_config.h): the
// seeds' four files read as Accelerate reads them, each distributed type's ds_config, the
// mixed-precision rules, and one clear line for each bad file.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "zerotrain/config/accelerate_ds_config.h"
#include "zerotrain/config/load.h"
#include "zerotrain/core/error.h"

namespace zt::config {
namespace {

AccelerateConfig parse(const std::string& yaml) {
  return parse_accelerate_config(yaml, "acc.yaml", "/cfg");
}

std::string error_of(const std::string& yaml, std::optional<std::string> dtype = std::nullopt) {
  try {
    accelerate_ds_config(parse(yaml), dtype);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

nlohmann::json ds_of(const std::string& yaml, std::optional<std::string> dtype = std::nullopt) {
  return accelerate_ds_config(parse(yaml), dtype).ds_config;
}

bool has_warning(const std::vector<std::string>& w, const std::string& part) {
  for (const std::string& line : w)
    if (line.find(part) != std::string::npos) return true;
  return false;
}

// The seed's zero2_plugin.yaml (../shared/seed-accelerate), as accelerate config writes it.
const char* const kZero2Plugin = R"(compute_environment: LOCAL_MACHINE
deepspeed_config:
  gradient_accumulation_steps: 1
  gradient_clipping: 1.0
  offload_optimizer_device: none
  offload_param_device: none
  zero3_init_flag: false
  zero_stage: 2
distributed_type: DEEPSPEED
fsdp_config: {}
machine_rank: 0
main_process_ip: null
main_process_port: null
main_training_function: main
mixed_precision: fp16
num_machines: 1
num_processes: 2
use_cpu: false
)";

// The seed's fsdp_full_shard.yaml.
const char* const kFsdpFullShard = R"(compute_environment: LOCAL_MACHINE
debug: false
distributed_type: FSDP
downcast_bf16: 'no'
fsdp_config:
  fsdp_auto_wrap_policy: TRANSFORMER_BASED_WRAP
  fsdp_backward_prefetch: BACKWARD_PRE
  fsdp_cpu_ram_efficient_loading: true
  fsdp_forward_prefetch: false
  fsdp_offload_params: false
  fsdp_sharding_strategy: FULL_SHARD
  fsdp_state_dict_type: SHARDED_STATE_DICT
  fsdp_sync_module_states: true
  fsdp_transformer_layer_cls_to_wrap: MistralDecoderLayer
  fsdp_use_orig_params: true
machine_rank: 0
main_training_function: main
mixed_precision: bf16
num_machines: 1
num_processes: 4
rdzv_backend: static
same_network: true
tpu_env: []
tpu_use_cluster: false
tpu_use_sudo: false
use_cpu: false
)";

TEST(AccelerateConfig, SeedPluginFileIsDeepSpeedsPluginConfig) {
  const AccelerateConfig a = parse(kZero2Plugin);
  EXPECT_EQ(a.backend, AccelerateBackend::deepspeed);
  EXPECT_EQ(a.mixed_precision, MixedPrecision::fp16);
  EXPECT_EQ(a.ranks.num_processes, 2);
  EXPECT_FALSE(a.use_cpu);
  EXPECT_TRUE(a.warnings.empty()) << a.warnings.front();
  const AccelerateRun run = accelerate_ds_config(a, std::nullopt);
  const nlohmann::json expected = nlohmann::json::parse(R"({
    "train_batch_size": "auto", "train_micro_batch_size_per_gpu": "auto",
    "gradient_accumulation_steps": 1, "gradient_clipping": 1.0,
    "zero_optimization": {"stage": 2, "offload_optimizer": {"device": "none"},
                          "offload_param": {"device": "none"}},
    "fp16": {"enabled": true, "auto_cast": true}, "bf16": {"enabled": false}})");
  EXPECT_EQ(run.ds_config, expected) << run.ds_config.dump();
  EXPECT_FALSE(run.zero_init);  // zero3_init_flag: false
}

TEST(AccelerateConfig, PluginDefaultsAreAccelerates) {
  // Stage 2, accumulation "auto", no clipping key, stage 3's save flag only at stage 3.
  const nlohmann::json ds = ds_of("distributed_type: DEEPSPEED\nnum_processes: 1\n");
  EXPECT_EQ(ds["zero_optimization"]["stage"], 2);
  EXPECT_EQ(ds["gradient_accumulation_steps"], "auto");
  EXPECT_FALSE(ds.contains("gradient_clipping"));
  EXPECT_FALSE(ds["zero_optimization"].contains("stage3_gather_16bit_weights_on_model_save"));
  const nlohmann::json z3 = ds_of(
      "distributed_type: DEEPSPEED\nnum_processes: 1\ndeepspeed_config:\n  zero_stage: 3\n"
      "  offload_optimizer_device: nvme\n  offload_optimizer_nvme_path: /nvme\n"
      "  zero3_save_16bit_model: true\n");
  EXPECT_EQ(z3["zero_optimization"]["offload_optimizer"],
            nlohmann::json::parse(R"({"device": "nvme", "nvme_path": "/nvme"})"));
  EXPECT_EQ(z3["zero_optimization"]["stage3_gather_16bit_weights_on_model_save"], true);
  // mixed_precision no: both sections off, so --dtype must agree with f32.
  EXPECT_EQ(ds["fp16"]["enabled"], false);
  EXPECT_EQ(ds["bf16"]["enabled"], false);
}

TEST(AccelerateConfig, ConfigFileGovernsAndMixedPrecisionFillsItsAuto) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "zt_accelerate_test";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "ds.json") << R"({"fp16": {"enabled": "auto"},
      "zero_optimization": {"stage": 3}, "train_micro_batch_size_per_gpu": 2})";
  const std::string yaml =
      "distributed_type: DEEPSPEED\nnum_processes: 2\nmixed_precision: fp16\n"
      "deepspeed_config:\n  deepspeed_config_file: ds.json\n"
      "  zero3_init_flag: true\n";
  const AccelerateConfig a = parse_accelerate_config(yaml, "acc.yaml", dir);
  const AccelerateRun run = accelerate_ds_config(a, std::nullopt);
  EXPECT_EQ(run.ds_source, (dir / "ds.json").string());
  EXPECT_EQ(run.ds_config["fp16"]["enabled"], true);
  EXPECT_EQ(run.ds_config["bf16"]["enabled"], false);
  EXPECT_EQ(run.ds_config["gradient_accumulation_steps"], 1);  // Accelerate's default for a file
  EXPECT_TRUE(run.zero_init);
  // The file enabling bf16 against mixed_precision fp16: Accelerate's refusal.
  std::ofstream(dir / "bf16.json") << R"({"bf16": {"enabled": true}, "zero_optimization": {}})";
  const AccelerateConfig b = parse_accelerate_config(
      "distributed_type: DEEPSPEED\nnum_processes: 1\nmixed_precision: fp16\n"
      "deepspeed_config:\n  deepspeed_config_file: bf16.json\n",
      "acc.yaml", dir);
  EXPECT_THROW(accelerate_ds_config(b, std::nullopt), ValueError);
  std::ofstream(dir / "nozero.json") << R"({"train_micro_batch_size_per_gpu": 2})";
  const AccelerateConfig c = parse_accelerate_config(
      "distributed_type: DEEPSPEED\nnum_processes: 1\n"
      "deepspeed_config:\n  deepspeed_config_file: nozero.json\n",
      "acc.yaml", dir);
  EXPECT_THROW(accelerate_ds_config(c, std::nullopt), ValueError);
  std::filesystem::remove_all(dir);
}

TEST(AccelerateConfig, PluginKeysBesideAConfigFileAreRefusedAsAccelerateDoes) {
  const std::string e = error_of(
      "distributed_type: DEEPSPEED\nnum_processes: 1\ndeepspeed_config:\n"
      "  deepspeed_config_file: ds.json\n  zero_stage: 3\n");
  EXPECT_NE(e.find("deepspeed_config.zero_stage: set beside deepspeed_config_file"),
            std::string::npos)
      << e;
}

TEST(AccelerateConfig, SeedFsdpFileIsStage3Bf16Mixed) {
  const AccelerateConfig a = parse(kFsdpFullShard);
  EXPECT_EQ(a.backend, AccelerateBackend::fsdp);
  EXPECT_EQ(a.fsdp.sharding, FsdpSharding::full_shard);
  EXPECT_EQ(a.ranks.num_processes, 4);
  // The wrap and prefetch keys: one line saying they are implied; nothing else warned about.
  ASSERT_EQ(a.warnings.size(), 1u);
  EXPECT_NE(a.warnings[0].find("implied"), std::string::npos) << a.warnings[0];
  const AccelerateRun run = accelerate_ds_config(a, std::nullopt);
  EXPECT_EQ(run.ds_config["zero_optimization"], nlohmann::json::parse(R"({"stage": 3})"));
  EXPECT_EQ(run.ds_config["bf16"]["enabled"], true);
  EXPECT_EQ(run.ds_config["fp16"]["enabled"], false);
  EXPECT_EQ(run.ds_config["gradient_clipping"], "auto");  // the training script's
  EXPECT_TRUE(run.zero_init);                             // fsdp_cpu_ram_efficient_loading
}

TEST(AccelerateConfig, FsdpStrategiesMapOntoZeroStages) {
  const auto stage_of = [](const std::string& strategy) {
    const nlohmann::json ds =
        ds_of("distributed_type: FSDP\nnum_processes: 4\nfsdp_config:\n  fsdp_sharding_strategy: " +
              strategy + "\n  fsdp_state_dict_type: SHARDED_STATE_DICT\n");
    return ds["zero_optimization"]["stage"].get<int>();
  };
  EXPECT_EQ(stage_of("FULL_SHARD"), 3);
  EXPECT_EQ(stage_of("SHARD_GRAD_OP"), 2);
  EXPECT_EQ(stage_of("NO_SHARD"), 0);
  EXPECT_EQ(stage_of("HYBRID_SHARD"), 3);
  EXPECT_EQ(stage_of("1"), 3);  // the numeric forms
  EXPECT_EQ(stage_of("2"), 2);
  EXPECT_EQ(stage_of("3"), 0);
  EXPECT_EQ(stage_of("5"), 2);
  // FSDP 2's spelling, and a key without its fsdp_ prefix (Accelerate adds it).
  EXPECT_EQ(ds_of("distributed_type: FSDP\nnum_processes: 2\nfsdp_config:\n  fsdp_version: 2\n"
                  "  reshard_after_forward: false\n")["zero_optimization"]["stage"],
            2);
  // HYBRID_SHARD over 2 machines of 4: sharded within each machine.
  const nlohmann::json h = ds_of(
      "distributed_type: FSDP\nnum_processes: 8\nnum_machines: 2\nmain_process_ip: 10.0.0.1\n"
      "main_process_port: 29500\nfsdp_config:\n  fsdp_sharding_strategy: HYBRID_SHARD\n");
  EXPECT_EQ(h["zero_optimization"]["zero_hpz_partition_size"], 4);
  // FULL_STATE_DICT (Accelerate's default): every checkpoint also holds the gathered weights.
  EXPECT_EQ(ds_of("distributed_type: FSDP\nnum_processes: 2\n")
                ["zero_optimization"]["stage3_gather_16bit_weights_on_model_save"],
            true);
}

TEST(AccelerateConfig, FsdpOffloadAndCheckpointing) {
  const nlohmann::json full = ds_of(
      "distributed_type: FSDP\nnum_processes: 2\nfsdp_config:\n  fsdp_offload_params: true\n"
      "  fsdp_activation_checkpointing: true\n");
  EXPECT_EQ(full["zero_optimization"]["offload_param"]["device"], "cpu");
  EXPECT_EQ(full["zero_optimization"]["offload_optimizer"]["device"], "cpu");
  EXPECT_TRUE(full.contains("activation_checkpointing"));
  const AccelerateRun grad_op = accelerate_ds_config(
      parse("distributed_type: FSDP\nnum_processes: 2\nfsdp_config:\n"
            "  fsdp_sharding_strategy: SHARD_GRAD_OP\n  fsdp_offload_params: true\n"),
      std::nullopt);
  EXPECT_FALSE(grad_op.ds_config["zero_optimization"].contains("offload_param"));
  EXPECT_TRUE(has_warning(grad_op.warnings, "the parameters stay on the device"));
  EXPECT_NE(error_of("distributed_type: FSDP\nnum_processes: 2\nfsdp_config:\n"
                     "  fsdp_sharding_strategy: NO_SHARD\n  fsdp_offload_params: true\n")
                .find("fsdp_config.fsdp_offload_params: with NO_SHARD"),
            std::string::npos);
}

TEST(AccelerateConfig, FsdpWithoutMixedPrecisionTrainsTheLoadedDtype) {
  const std::string yaml = "distributed_type: FSDP\nnum_processes: 2\nmixed_precision: 'no'\n";
  // A model loaded in bf16: the low-precision mode (seed 000's table 2).
  const nlohmann::json low = ds_of(yaml, "bf16");
  EXPECT_EQ(low["bf16"], nlohmann::json::parse(R"({"enabled": true,
      "bf16_master_weights_and_grads": true, "bf16_optimizer_states": true})"));
  // No --dtype: f32, no precision section at all.
  EXPECT_FALSE(ds_of(yaml).contains("bf16"));
  EXPECT_NE(error_of(yaml, "fp16").find("mixed_precision: no, with --dtype fp16"),
            std::string::npos);
  // It reads as a ds_config: bf16 masters and optimizer states at stage 3.
  ConfigOverrides o;
  o.micro_batch = 2;
  o.grad_accum = 1;
  o.clip = 1.0;
  const LoadedConfig loaded = parse_ds_config(low.dump(), "acc.yaml", o);
  EXPECT_TRUE(loaded.config.bf16.bf16_master_weights_and_grads);
  EXPECT_TRUE(loaded.config.bf16.bf16_optimizer_states);
}

TEST(AccelerateConfig, DataParallelTypesAreStageZero) {
  for (const char* type : {"MULTI_GPU", "MULTI_CPU", "NO"}) {
    const AccelerateConfig a = parse(str("distributed_type: ", type, "\nnum_processes: 1\n"));
    const nlohmann::json ds = accelerate_ds_config(a, std::nullopt).ds_config;
    EXPECT_EQ(ds["zero_optimization"]["stage"], 0) << type;
    EXPECT_FALSE(ds.contains("bf16")) << type;  // --dtype decides
    EXPECT_EQ(a.use_cpu, std::string(type) == "MULTI_CPU") << type;
  }
  EXPECT_EQ(
      ds_of("distributed_type: MULTI_GPU\nnum_processes: 2\nmixed_precision: bf16\n")["bf16"]
                                                                                     ["enabled"],
      true);
  EXPECT_EQ(parse("distributed_type: NO\n").ranks.num_processes, 1);
}

TEST(AccelerateConfig, UnusedKeysAreNamedInOneWarningLine) {
  const AccelerateConfig a = parse(
      "distributed_type: MULTI_GPU\nnum_processes: 2\ndebug: true\nenable_cpu_affinity: true\n"
      "dynamo_config:\n  dynamo_backend: INDUCTOR\nfsdp_config:\n  fsdp_offload_params: true\n");
  ASSERT_EQ(a.warnings.size(), 1u);
  EXPECT_EQ(a.warnings[0],
            "[accelerate] acc.yaml: not used by zerotrain (ignored): fsdp_config (with "
            "distributed_type MULTI_GPU), debug, enable_cpu_affinity, dynamo_config");
  const AccelerateConfig d = parse(
      "distributed_type: DEEPSPEED\nnum_processes: 2\nrdzv_backend: c10d\n"
      "deepspeed_config:\n  deepspeed_hostfile: /h\n  zero_stag: 3\n");
  ASSERT_EQ(d.warnings.size(), 1u);
  EXPECT_TRUE(has_warning(d.warnings,
                          "rdzv_backend, deepspeed_config.deepspeed_hostfile, "
                          "deepspeed_config.zero_stag"));
}

TEST(AccelerateConfig, BadFilesAreOneLineNamingTheKey) {
  const auto read_error = [](const std::string& yaml) {
    try {
      parse(yaml);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(read_error("distributed_type: [DEEPSPEED\n").find("acc.yaml: not YAML: line"),
            std::string::npos);
  EXPECT_NE(read_error("- a\n- b\n").find("expected a YAML map of settings, got a list"),
            std::string::npos);
  EXPECT_NE(read_error("num_processes: 2\n").find("distributed_type: missing"), std::string::npos);
  EXPECT_NE(read_error("distributed_type: XLA\nnum_processes: 8\n").find("\"XLA\" is not run"),
            std::string::npos);
  EXPECT_NE(read_error("distributed_type: MULTI_GPU\nnum_processes: two\n")
                .find("num_processes: expected an integer, got \"two\""),
            std::string::npos);
  EXPECT_NE(read_error("distributed_type: MULTI_GPU\n").find("num_processes: not set"),
            std::string::npos);
  EXPECT_NE(read_error("distributed_type: MULTI_GPU\nnum_processes: 2\nuse_cpu: maybe\n")
                .find("use_cpu: expected true or false"),
            std::string::npos);
  EXPECT_NE(read_error("distributed_type: MULTI_GPU\nnum_processes: 2\nnum_procesess: 2\n")
                .find("num_procesess: unknown key (Accelerate refuses it too); did you mean "
                      "num_processes?"),
            std::string::npos);
  EXPECT_NE(read_error("distributed_type: MULTI_GPU\nnum_processes: 2\nnum_processes: 4\n")
                .find("num_processes: repeated key"),
            std::string::npos);
  EXPECT_NE(read_error("distributed_type: MULTI_GPU\nnum_processes: 2\nmixed_precision: fp8\n")
                .find("mixed_precision: fp8 is not run"),
            std::string::npos);
  EXPECT_NE(read_error("distributed_type: DEEPSPEED\nnum_processes: 2\ndeepspeed_config:\n"
                       "  zero_stage: 4\n")
                .find("deepspeed_config.zero_stage: expected 0, 1, 2 or 3, got 4"),
            std::string::npos);
  EXPECT_NE(read_error("distributed_type: FSDP\nnum_processes: 2\nfsdp_config:\n"
                       "  fsdp_sharding_strategy: QUARTER_SHARD\n")
                .find("fsdp_config.fsdp_sharding_strategy: expected FULL_SHARD"),
            std::string::npos);
  EXPECT_NE(read_error("distributed_type: FSDP\nnum_processes: 2\nfsdp_config:\n"
                       "  sharding_strategy: 1\n  fsdp_sharding_strategy: 2\n")
                .find("repeated key"),
            std::string::npos);
  EXPECT_NE(read_error("distributed_type: MULTI_GPU\nnum_processes: 3\nnum_machines: 2\n")
                .find("num_processes: 3 does not split evenly over num_machines 2"),
            std::string::npos);
  EXPECT_NE(read_error("distributed_type: MULTI_GPU\nnum_processes: 4\nnum_machines: 2\n")
                .find("main_process_ip: needed with num_machines > 1"),
            std::string::npos);
  EXPECT_NE(read_error("compute_environment: AMAZON_SAGEMAKER\ndistributed_type: NO\n")
                .find("compute_environment: \"AMAZON_SAGEMAKER\" is not run"),
            std::string::npos);
}

TEST(AccelerateConfig, LegacyFp16KeyAndUnquotedNo) {
  EXPECT_EQ(parse("distributed_type: NO\nfp16: true\n").mixed_precision, MixedPrecision::fp16);
  EXPECT_EQ(parse("distributed_type: NO\nmixed_precision: no\n").mixed_precision,
            MixedPrecision::no);
}

}  // namespace
}  // namespace zt::config
