// `zerotrain train --deepspeed` (zerotrain/train/ds_train_config.h): the resolved ds_config mapped
// onto TrainConfig, settings the trainer cannot run reported, and given flags checked against
// the file.
#include <gtest/gtest.h>

#include "zerotrain/config/load.h"
#include "zerotrain/core/error.h"
#include "zerotrain/train/ds_train_config.h"
#include "zerotrain/train/offload_flags.h"
#include "zerotrain/train/train_scheduler.h"

namespace zt::train {
namespace {

GivenFlags given(const char* flag) {
  return GivenFlags{flag};
}

config::DsConfig load(const std::string& text, const TrainConfig& c, const GivenFlags& g,
                      std::optional<int64_t> hidden = std::nullopt) {
  return config::parse_ds_config(text, "test", train_overrides(c, g, hidden)).config;
}

std::string error_of(const std::string& text, TrainConfig c = {}, GivenFlags g = {}) {
  try {
    apply_ds_config(load(text, c, g), g, c);
    validate_train_config(c);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(DsTrainConfig, HuggingFaceStyleFileMapsOntoTrainConfig) {
  TrainConfig c;
  c.data.micro_batch = 4;
  c.schedule.lr = 1e-3;
  GivenFlags g = given("--micro-batch");
  g.insert("--lr");
  const config::DsConfig ds = load(R"({
      "train_micro_batch_size_per_gpu": "auto", "gradient_accumulation_steps": 2,
      "gradient_clipping": 0.5, "bf16": {"enabled": true}, "steps_per_print": 5,
      "optimizer": {"type": "AdamW", "params": {"lr": "auto", "betas": [0.8, 0.9], "eps": 1e-6,
                                                "weight_decay": 0.01}},
      "zero_optimization": {"stage": 0, "reduce_bucket_size": "auto"},
      "activation_checkpointing": {"partition_activations": false, "number_checkpoints": 2}})",
                                   c, g, 256);
  EXPECT_EQ(ds.zero_optimization.reduce_bucket_size, 256 * 256);
  apply_ds_config(ds, g, c);
  EXPECT_EQ(c.data.micro_batch, 4);
  EXPECT_EQ(c.data.grad_accum, 2);
  EXPECT_DOUBLE_EQ(c.clip, 0.5);
  EXPECT_EQ(c.precision.dtype, DType::bf16);
  EXPECT_DOUBLE_EQ(c.schedule.lr, 1e-3);
  EXPECT_DOUBLE_EQ(c.optimizer.beta1, 0.8);
  EXPECT_DOUBLE_EQ(c.optimizer.beta2, 0.9);
  EXPECT_DOUBLE_EQ(c.optimizer.eps, 1e-6);
  EXPECT_DOUBLE_EQ(c.optimizer.weight_decay, 0.01);
  EXPECT_EQ(c.reporting.log_every, 5);
  EXPECT_TRUE(c.activation_checkpointing);
}

TEST(DsTrainConfig, AFileWithoutOptimizerKeepsTheCommandLinesAdamW) {
  TrainConfig c;
  c.schedule.lr = 2e-4;
  c.optimizer.weight_decay = 0.2;
  c.clip = 0.5;
  apply_ds_config(load(R"({"train_batch_size": 8})", c, {}), {}, c);
  EXPECT_DOUBLE_EQ(c.schedule.lr, 2e-4);
  EXPECT_DOUBLE_EQ(c.optimizer.weight_decay, 0.2);
  EXPECT_EQ(c.data.micro_batch, 8);
  EXPECT_EQ(c.data.grad_accum, 1);
  EXPECT_DOUBLE_EQ(c.clip, 1.0);  // DeepSpeed 0.19.6's default (0, no clipping, before)
  EXPECT_FALSE(c.activation_checkpointing);
}

// See [Note: fp16 in ds_config].
TEST(DsTrainConfig, Fp16SectionMapsOntoTheLossScaler) {
  TrainConfig c;
  apply_ds_config(load(R"({"train_batch_size": 8, "fp16": {"enabled": true,
                      "initial_scale_power": 12, "loss_scale_window": 50, "hysteresis": 3,
                      "consecutive_hysteresis": true, "min_loss_scale": 4}})",
                       c, {}),
                  {}, c);
  EXPECT_EQ(c.precision.dtype, DType::f16);
  EXPECT_EQ(c.precision.loss_scaler.loss_scale, 0.0);
  EXPECT_EQ(c.precision.loss_scaler.initial_scale_power, 12);
  EXPECT_EQ(c.precision.loss_scaler.loss_scale_window, 50);
  EXPECT_EQ(c.precision.loss_scaler.hysteresis, 3);
  EXPECT_TRUE(c.precision.loss_scaler.consecutive_hysteresis);
  EXPECT_EQ(c.precision.loss_scaler.min_loss_scale, 4.0);

  TrainConfig s;
  apply_ds_config(
      load(R"({"train_batch_size": 8, "fp16": {"enabled": true, "loss_scale": 128}})", s, {}), {},
      s);
  EXPECT_EQ(s.precision.dtype, DType::f16);
  EXPECT_EQ(s.precision.loss_scaler.loss_scale, 128.0);

  // --dtype f16 fills "auto" and turns on a missing section; it must agree with the file.
  TrainConfig f;
  f.precision.dtype = DType::f16;
  const GivenFlags g = given("--dtype");
  apply_ds_config(load(R"({"train_batch_size": 8, "fp16": {"enabled": "auto"}})", f, g), g, f);
  EXPECT_EQ(f.precision.dtype, DType::f16);
  apply_ds_config(load(R"({"train_batch_size": 8})", f, g), g, f);
  EXPECT_EQ(f.precision.dtype, DType::f16);
  EXPECT_NE(error_of(R"({"train_batch_size": 8, "fp16": {"enabled": false}})", f, g)
                .find("fp16.enabled: the config gives false but --dtype fp16 gives true"),
            std::string::npos);
}

// bf16.check_grad_overflow: DeepSpeed 0.19.6's default (true) runs; false is honoured too.
TEST(DsTrainConfig, Bf16CheckGradOverflowMapsOntoThePrecisionSection) {
  TrainConfig c;
  apply_ds_config(load(R"({"train_batch_size": 8, "bf16": {"enabled": true}})", c, {}), {}, c);
  EXPECT_EQ(c.precision.dtype, DType::bf16);
  EXPECT_TRUE(c.precision.check_grad_overflow);
  TrainConfig off;
  apply_ds_config(load(R"({"train_batch_size": 8, "bf16": {"enabled": true,
                      "check_grad_overflow": false}})",
                       off, {}),
                  {}, off);
  EXPECT_FALSE(off.precision.check_grad_overflow);
  EXPECT_EQ(error_of(R"({"train_batch_size": 8, "bf16": {"enabled": true,
                 "check_grad_overflow": true}})"),
            "no error");
}

TEST(DsTrainConfig, ZeroStageAndStage3BoundsMapOntoTrainConfig) {
  TrainConfig c;
  const config::DsConfig ds = load(R"({
      "train_micro_batch_size_per_gpu": 2,
      "zero_optimization": {"stage": 3, "overlap_comm": false, "reduce_bucket_size": "auto",
                            "stage3_prefetch_bucket_size": "auto",
                            "stage3_param_persistence_threshold": "auto",
                            "stage3_max_live_parameters": 3e8}})",
                                   c, {}, 100);
  apply_ds_config(ds, {}, c);
  EXPECT_EQ(c.zero.stage, 3);
  EXPECT_FALSE(c.zero.overlap_comm);
  EXPECT_EQ(c.zero.reduce_bucket_size, 100 * 100);
  EXPECT_EQ(c.zero.prefetch_bucket_size, 9000);  // int(0.9 * hidden^2), as the HF Trainer
  EXPECT_EQ(c.zero.param_persistence_threshold, 10 * 100);  // 10 * hidden
  EXPECT_EQ(c.zero.max_live_parameters, 300'000'000);
}

TEST(DsTrainConfig, UnsupportedSettingsAreNamed) {
  EXPECT_NE(error_of(R"({"train_batch_size": 8, "zero_optimization": {"stage": 2},
                 "fp16": {"enabled": true, "fp16_master_weights_and_grads": true}})")
                .find("fp16.fp16_master_weights_and_grads: not supported yet by zerotrain train"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"train_batch_size": 8, "optimizer": {"type": "Lamb"},
                 "zero_optimization": {"stage": 1, "offload_optimizer": {"device": "cpu"}}})")
                .find("zero_optimization.offload_optimizer: not supported yet by zerotrain train "
                      "(Lamb with optimizer offload"),
            std::string::npos);
  TrainConfig lion;
  apply_ds_config(load(R"({"train_batch_size": 8, "optimizer": {"type": "Lion",
                 "params": {"betas": [0.95, 0.98], "weight_decay": 0.2}}})",
                       lion, {}),
                  {}, lion);
  EXPECT_EQ(lion.optimizer.kind, optim::OptimizerKind::lion);  // runs now
  EXPECT_DOUBLE_EQ(lion.optimizer.beta1, 0.95);
  EXPECT_DOUBLE_EQ(lion.optimizer.weight_decay, 0.2);
  EXPECT_NE(error_of(R"({"train_batch_size": 8, "scheduler": {"type": "WarmupLR",
                 "params": {"last_batch_iteration": 5}}})")
                .find("scheduler.params.last_batch_iteration: not supported yet"),
            std::string::npos);
}

// The offload sections map onto the ZeRO section's OffloadPolicy; the ZeRO section's one check
// accepts what the engine runs, ZeRO-Infinity's parameters on NVMe included.
TEST(DsTrainConfig, OffloadSectionsMapOntoThePolicy) {
  TrainConfig c;
  const GivenFlags g;
  apply_ds_config(load(R"({"train_batch_size": 8, "zero_optimization": {"stage": 3,
                 "offload_optimizer": {"device": "cpu", "pin_memory": true},
                 "offload_param": {"device": "nvme", "nvme_path": "/local_nvme"}}})",
                       c, g),
                  g, c);
  EXPECT_EQ(c.zero.offload.optimizer.device, config::OffloadDevice::cpu);
  EXPECT_TRUE(c.zero.offload.optimizer.pin_memory);
  EXPECT_EQ(c.zero.offload.params.device, config::OffloadDevice::nvme);
  EXPECT_EQ(c.zero.offload.params.nvme_path, "/local_nvme");
  EXPECT_EQ(error_of(R"({"train_batch_size": 8, "zero_optimization": {"stage": 2,
                 "offload_optimizer": {"device": "cpu"}}})"),
            "no error");
  EXPECT_EQ(error_of(R"({"train_batch_size": 8, "zero_optimization": {"stage": 2,
                 "offload_optimizer": {"device": "nvme", "nvme_path": "/local_nvme"}}})"),
            "no error");
  EXPECT_EQ(error_of(R"({"train_batch_size": 8, "zero_optimization": {"stage": 3,
                 "offload_param": {"device": "nvme", "nvme_path": "/local_nvme"}}})"),
            "no error");
  EXPECT_EQ(error_of(R"({"train_batch_size": 8, "zero_optimization": {"stage": 2,
                 "offload_optimizer": {"device": "none"}}})"),
            "no error");
}

// DeepSpeed ignores offload_param below stage 3 ([Note: offload at the wrong stage] in
// config/load.cpp): a warning naming the key, and the policy the engine gets has no parameter
// offload; `config check` still prints the section.
TEST(DsTrainConfig, OffloadParamBelowStage3WarnsAndIsDropped) {
  TrainConfig c;
  c.zero.offload.params.device = config::OffloadDevice::cpu;  // what a flag set, replaced
  const GivenFlags g;
  const config::LoadedConfig l = config::parse_ds_config(
      R"({"train_batch_size": 8, "zero_optimization": {"stage": 2,
          "offload_optimizer": {"device": "cpu"}, "offload_param": {"device": "cpu"}}})",
      "test", train_overrides(c, g, std::nullopt));
  ASSERT_EQ(l.warnings.size(), 1u);
  EXPECT_EQ(l.warnings[0],
            "[config] zero_optimization.offload_param.device cpu: ignored at ZeRO stage 2 "
            "(DeepSpeed offloads parameters only at stage 3; --offload-param)");
  EXPECT_NE(config::ds_config_json(l.config).find("\"offload_param\": {"), std::string::npos);
  apply_ds_config(l.config, g, c);
  EXPECT_EQ(c.zero.offload.params.device, config::OffloadDevice::none);
  EXPECT_EQ(c.zero.offload.optimizer.device, config::OffloadDevice::cpu);
  // offload_optimizer at stage 0 stays an error: DeepSpeed's CPU Adam fails at its first step.
  EXPECT_NE(error_of(R"({"train_batch_size": 8, "zero_optimization": {"stage": 0,
                 "offload_optimizer": {"device": "cpu"}}})")
                .find("[config] zero_optimization.offload_optimizer.device: cpu needs ZeRO stage "
                      "1, 2 or 3"),
            std::string::npos);
}

// The offload flags: given ones fill the file's sections (and must agree with them); without a
// file they set the policy, and the checks only flags need name the key and the flag.
TEST(DsTrainConfig, OffloadFlagsFillTheFileOrSetThePolicy) {
  OffloadFlags f;
  f.optimizer = "nvme";
  f.params = "cpu";
  f.nvme_path = "/local_nvme";
  f.pin_memory = true;
  f.sub_group_size = 5000;
  TrainConfig c;
  apply_offload_flags(f, c.zero);
  GivenFlags g{"--offload-optimizer", "--offload-param", "--nvme-path", "--pin-memory",
               "--sub-group-size"};
  TrainConfig from_file = c;
  apply_ds_config(load(R"({"train_batch_size": 8, "zero_optimization": {"stage": 3}})", c, g), g,
                  from_file);
  for (const TrainConfig* t : {&c, &from_file}) {
    const zero::OffloadPolicy& p = t->zero.offload;
    EXPECT_EQ(p.optimizer.device, config::OffloadDevice::nvme);
    EXPECT_EQ(p.optimizer.nvme_path, "/local_nvme");
    EXPECT_TRUE(p.optimizer.pin_memory);
    EXPECT_EQ(p.params.device, config::OffloadDevice::cpu);
    EXPECT_TRUE(p.params.pin_memory);
    EXPECT_EQ(p.sub_group_size, 5000);
  }
  auto flag_error = [&](OffloadFlags flags, int stage, const GivenFlags& given) -> std::string {
    TrainConfig t;
    t.zero.stage = stage;
    try {
      apply_offload_flags(flags, t.zero);
      check_offload_flags(t.zero, given);
    } catch (const Error& e) {
      return e.what();
    }
    return "no error";
  };
  EXPECT_EQ(flag_error(f, 3, g), "no error");
  EXPECT_EQ(flag_error(f, 2, g),
            "[config] zero_optimization.offload_param.device: --offload-param cpu needs "
            "--zero-stage 3 (zero_optimization.stage), got 2");
  OffloadFlags opt_only;
  opt_only.optimizer = "cpu";
  EXPECT_EQ(flag_error(opt_only, 0, {"--offload-optimizer"}),
            "[config] zero_optimization.offload_optimizer.device: --offload-optimizer cpu needs "
            "--zero-stage 1, 2 or 3 (zero_optimization.stage), got 0");
  OffloadFlags stray_path = opt_only;
  stray_path.nvme_path = "/x";
  EXPECT_NE(flag_error(stray_path, 2, {"--nvme-path"})
                .find("zero_optimization.offload_optimizer.nvme_path: --nvme-path /x is given but "
                      "neither --offload-optimizer nor --offload-param is nvme"),
            std::string::npos);
  OffloadFlags no_path;
  no_path.params = "nvme";
  EXPECT_EQ(flag_error(no_path, 3, {"--offload-param"}),
            "[config] zero_optimization.offload_param.nvme_path: device nvme needs a directory "
            "to swap to: give --nvme-path DIR");
  OffloadFlags pinned;
  pinned.pin_memory = true;
  EXPECT_NE(flag_error(pinned, 3, {"--pin-memory"}).find("--pin-memory is given but nothing"),
            std::string::npos);
  OffloadFlags bad_device;
  bad_device.optimizer = "gpu";
  EXPECT_NE(flag_error(bad_device, 1, {}).find("--offload-optimizer gpu"), std::string::npos);
}

// DeepSpeed's Adam variants map onto TrainConfig: "Adam" decouples the decay unless adam_w_mode is
// false (torch.optim.Adam's L2 term), "AdamW" always does; amsgrad and bias_correction map as set.
TEST(DsTrainConfig, AdamVariantsMap) {
  struct Case {
    const char* optimizer;
    bool decoupled, amsgrad, bias_correction;
  };
  const Case cases[] = {
      {R"({"type": "Adam", "params": {"adam_w_mode": false, "weight_decay": 0.1,
                                       "amsgrad": true}})",
       false, true, true},
      {R"({"type": "Adam", "params": {"bias_correction": false}})", true, false, false},
      {R"({"type": "AdamW", "params": {"adam_w_mode": false, "amsgrad": true}})", true, true, true},
      {R"({"type": "Adam", "params": {"torch_adam": true}})", true, false, true},
  };
  for (const Case& k : cases) {
    SCOPED_TRACE(k.optimizer);
    TrainConfig c;
    const std::string text = str(R"({"train_batch_size": 8, "optimizer": )", k.optimizer, "}");
    apply_ds_config(load(text, c, {}), {}, c);
    EXPECT_EQ(c.optimizer.adam_w_mode, k.decoupled);
    EXPECT_EQ(c.optimizer.amsgrad, k.amsgrad);
    EXPECT_EQ(c.optimizer.bias_correction, k.bias_correction);
  }
}

// amsgrad needs an f32 third moment, which the low-precision mode does not keep: refused when the
// config is applied, before any training, naming the key. Given flags must agree with the file.
TEST(DsTrainConfig, AmsgradWithLowPrecisionAndDisagreeingFlagsAreRefused) {
  const std::string low = error_of(R"({"train_batch_size": 8, "zero_optimization": {"stage": 1},
      "bf16": {"enabled": true, "bf16_master_weights_and_grads": true,
               "bf16_optimizer_states": true},
      "optimizer": {"type": "Adam", "params": {"amsgrad": true}}})");
  EXPECT_NE(low.find("[config] optimizer.params.amsgrad (--amsgrad): true"), std::string::npos)
      << low;
  EXPECT_NE(low.find("low-precision"), std::string::npos) << low;
  EXPECT_EQ(low.find('\n'), std::string::npos) << low;

  TrainConfig c;
  c.optimizer.amsgrad = true;
  const std::string ams =
      error_of(R"({"train_batch_size": 8, "optimizer": {"type": "Adam"}})", c, given("--amsgrad"));
  EXPECT_NE(ams.find("optimizer.params.amsgrad"), std::string::npos) << ams;
  EXPECT_NE(ams.find("--amsgrad"), std::string::npos) << ams;
  TrainConfig l2;
  l2.optimizer.adam_w_mode = false;
  const std::string mode = error_of(R"({"train_batch_size": 8, "optimizer": {"type": "AdamW"}})",
                                    l2, given("--weight-decay-mode"));
  EXPECT_NE(mode.find("optimizer.params.adam_w_mode"), std::string::npos) << mode;
  EXPECT_NE(mode.find("--weight-decay-mode"), std::string::npos) << mode;
  // Agreeing flags are fine.
  EXPECT_EQ(error_of(R"({"train_batch_size": 8, "optimizer": {"type": "Adam",
                 "params": {"adam_w_mode": false}}})",
                     l2, given("--weight-decay-mode")),
            "no error");
}

// [Note: communication dtype] in zero/grad_comm.h: the keys map when set; unset, f32 stays even
// with bf16 on (not DeepSpeed's default, which would break the stages' bitwise parity).
TEST(DsTrainConfig, CommunicationAndAccumulationDtypesMap) {
  TrainConfig c;
  apply_ds_config(load(R"({"train_batch_size": 8, "bf16": {"enabled": true}})", c, {}), {}, c);
  EXPECT_EQ(c.precision.grad_accum_dtype, DType::f32);
  EXPECT_EQ(c.precision.comm_dtype, DType::f32);
  apply_ds_config(load(R"({"train_batch_size": 8, "bf16": {"enabled": true},
      "communication_data_type": "bf16", "data_types": {"grad_accum_dtype": "bf16"}})",
                       c, {}),
                  {}, c);
  EXPECT_EQ(c.precision.grad_accum_dtype, DType::bf16);
  EXPECT_EQ(c.precision.comm_dtype, DType::bf16);
  TrainConfig h;
  apply_ds_config(load(R"({"train_batch_size": 8, "communication_data_type": "fp16",
      "data_types": {"grad_accum_dtype": "fp32"}})",
                       h, {}),
                  {}, h);
  EXPECT_EQ(h.precision.comm_dtype, DType::f16);
  EXPECT_EQ(h.precision.grad_accum_dtype, DType::f32);
  // A flag fills a key the file leaves out.
  TrainConfig f;
  f.precision.comm_dtype = DType::bf16;
  const GivenFlags g = given("--comm-dtype");
  apply_ds_config(load(R"({"train_batch_size": 8})", f, g), g, f);
  EXPECT_EQ(f.precision.comm_dtype, DType::bf16);
}

TEST(DsTrainConfig, BadOrContradictedGradientDtypesAreNamed) {
  EXPECT_NE(error_of(R"({"train_batch_size": 8, "data_types": {"grad_accum_dtype": "bf16"}})")
                .find("data_types.grad_accum_dtype (--grad-accum-dtype): bf16 needs the model in "
                      "that dtype"),
            std::string::npos);
  TrainConfig c;
  c.precision.comm_dtype = DType::f32;
  EXPECT_NE(error_of(R"({"train_batch_size": 8, "communication_data_type": "bf16"})", c,
                     given("--comm-dtype"))
                .find("communication_data_type: the config gives bf16 but --comm-dtype gives f32"),
            std::string::npos);
  c.precision.dtype = DType::bf16;
  c.precision.grad_accum_dtype = DType::bf16;
  GivenFlags g = given("--grad-accum-dtype");
  g.insert("--dtype");
  EXPECT_NE(error_of(R"({"train_batch_size": 8, "bf16": {"enabled": true},
                 "data_types": {"grad_accum_dtype": "fp32"}})",
                     c, g)
                .find("data_types.grad_accum_dtype: the config gives fp32 but --grad-accum-dtype"),
            std::string::npos);
}

TEST(DsTrainConfig, SchedulerAutosTakeTheFlagsAsTheHfTrainerDoes) {
  TrainConfig c;
  c.schedule.lr = 2e-3;
  c.steps = 40;
  c.schedule.warmup_steps = 5;
  const GivenFlags g = given("--lr");
  apply_ds_config(load(R"({"train_batch_size": 8, "scheduler": {"type": "WarmupDecayLR",
      "params": {"warmup_min_lr": "auto", "warmup_max_lr": "auto", "warmup_num_steps": "auto",
                 "total_num_steps": "auto", "warmup_type": "linear"}}})",
                       c, g),
                  g, c);
  ASSERT_TRUE(c.schedule.deepspeed);
  EXPECT_EQ(ds_scheduler_json(*c.schedule.deepspeed, c.schedule.lr),
            nlohmann::json::parse(R"({"type": "WarmupDecayLR", "params": {
      "total_num_steps": 40, "warmup_min_lr": 0.0, "warmup_max_lr": 0.002,
      "warmup_num_steps": 5, "warmup_type": "linear"}})"));

  // A given --lr does not add warmup_max_lr to WarmupCosineLR, which has none; WarmupLR without
  // warmup_max_lr warms up to the optimizer's lr.
  TrainConfig d;
  apply_ds_config(load(R"({"train_batch_size": 8, "scheduler": {"type": "WarmupCosineLR",
      "params": {"total_num_steps": 10}}})",
                       d, g),
                  g, d);
  ASSERT_TRUE(d.schedule.deepspeed);
  EXPECT_FALSE(
      ds_scheduler_json(*d.schedule.deepspeed, d.schedule.lr)["params"].contains("warmup_max_lr"));
  TrainConfig e;
  e.schedule.lr = 5e-4;
  apply_ds_config(load(R"({"train_batch_size": 8, "scheduler": {"type": "WarmupLR"}})", e, {}), {},
                  e);
  ASSERT_TRUE(e.schedule.deepspeed);
  EXPECT_EQ(std::get<config::WarmupLrParams>(e.schedule.deepspeed->params).warmup_max_lr, 5e-4);

  // No section: the command line's schedule stays.
  TrainConfig f;
  apply_ds_config(load(R"({"train_batch_size": 8})", f, {}), {}, f);
  EXPECT_FALSE(f.schedule.deepspeed);
  EXPECT_FALSE(f.reporting.wall_clock_breakdown);
  EXPECT_TRUE(f.reporting.csv_monitor_dir.empty());
}

TEST(DsTrainConfig, MonitorAndWallClockSettingsMap) {
  TrainConfig c;
  apply_ds_config(load(R"({"train_batch_size": 8, "wall_clock_breakdown": true,
      "csv_monitor": {"enabled": true, "output_path": "logs/", "job_name": "run1"}})",
                       c, {}),
                  {}, c);
  EXPECT_TRUE(c.reporting.wall_clock_breakdown);
  EXPECT_EQ(c.reporting.csv_monitor_dir, std::filesystem::path("logs/run1"));
  EXPECT_TRUE(c.reporting.tensorboard_dir.empty());
  TrainConfig t;
  apply_ds_config(load(R"({"train_batch_size": 8,
      "tensorboard": {"enabled": true, "output_path": "tb/", "job_name": "run2"}})",
                       t, {}),
                  {}, t);
  EXPECT_EQ(t.reporting.tensorboard_dir, std::filesystem::path("tb/run2"));
  // Without output_path the directory is DeepSpeed's default job name under the working dir.
  TrainConfig u;
  apply_ds_config(load(R"({"train_batch_size": 8, "tensorboard": {"enabled": true}})", u, {}), {},
                  u);
  EXPECT_EQ(u.reporting.tensorboard_dir, std::filesystem::path("DeepSpeedJobName"));
  EXPECT_FALSE(u.reporting.wandb.enabled);
  TrainConfig w;
  apply_ds_config(load(R"({"train_batch_size": 8,
      "wandb": {"enabled": true, "project": "p", "group": "g", "team": "t"}})",
                       w, {}),
                  {}, w);
  EXPECT_TRUE(w.reporting.wandb.enabled);
  EXPECT_EQ(w.reporting.wandb.project, "p");
  EXPECT_EQ(w.reporting.wandb.group, std::optional<std::string>("g"));
  EXPECT_EQ(w.reporting.wandb.team, std::optional<std::string>("t"));
  // --tensorboard and the section must agree.
  TrainConfig v;
  v.reporting.tensorboard_dir = "elsewhere";
  EXPECT_THROW(apply_ds_config(load(R"({"train_batch_size": 8,
      "tensorboard": {"enabled": true, "output_path": "tb/", "job_name": "run2"}})",
                                    v, given("--tensorboard")),
                               given("--tensorboard"), v),
               ValueError);
  // The flag alone turns the breakdown on; a file with false does not turn it off.
  TrainConfig d;
  d.reporting.wall_clock_breakdown = true;
  apply_ds_config(load(R"({"train_batch_size": 8, "wall_clock_breakdown": false})", d, {}), {}, d);
  EXPECT_TRUE(d.reporting.wall_clock_breakdown);
}

TEST(DsTrainConfig, GivenFlagContradictingTheFileIsAnError) {
  TrainConfig c;
  c.reporting.log_every = 10;
  EXPECT_EQ(error_of(R"({"train_batch_size": 8, "steps_per_print": 100})", c, given("--log-every")),
            "[config] steps_per_print: the config gives 100 but --log-every gives 10; make them "
            "agree");
  c.precision.dtype = DType::bf16;
  EXPECT_NE(error_of(R"({"train_batch_size": 8, "bf16": {"enabled": false}})", c, given("--dtype"))
                .find("bf16.enabled: the config gives false but --dtype bf16 gives true"),
            std::string::npos);
}

TEST(DsTrainConfig, OverridesCarryTheGivenMarks) {
  TrainConfig c;
  c.data.micro_batch = 3;
  const config::ConfigOverrides o = train_overrides(c, given("--micro-batch"), 64);
  EXPECT_EQ(o.world_size, 1);
  EXPECT_EQ(o.hidden_size, 64);
  EXPECT_EQ(o.micro_batch, 3);
  EXPECT_TRUE(o.given.contains("--micro-batch"));
  EXPECT_FALSE(o.given.contains("--lr"));
  EXPECT_EQ(o.lr, c.schedule.lr);
  EXPECT_EQ(o.dtype, "f32");
}

// Issue 13: `--zero-stage 3 --deepspeed ds.json` with a file without zero_optimization.stage ran
// stage 0. Every ZeRO flag given fills its missing key and must agree with a set one.
TEST(DsTrainConfig, GivenZeroFlagsFillTheFileAndMustAgree) {
  TrainConfig c;
  c.zero.stage = 3;
  c.zero.reduce_bucket_size = 1234;
  c.zero.param_persistence_threshold = 11;
  c.zero.prefetch_bucket_size = 222;
  c.zero.max_live_parameters = 3333;
  const GivenFlags g{"--zero-stage", "--reduce-bucket-size", "--stage3-persistence-threshold",
                     "--stage3-prefetch-bucket-size", "--stage3-max-live-parameters"};
  TrainConfig run = c;
  apply_ds_config(load(R"({"train_batch_size": 8})", run, g), g, run);
  EXPECT_EQ(run.zero.stage, 3);
  EXPECT_EQ(run.zero.reduce_bucket_size, 1234);
  EXPECT_EQ(run.zero.param_persistence_threshold, 11);
  EXPECT_EQ(run.zero.prefetch_bucket_size, 222);
  EXPECT_EQ(run.zero.max_live_parameters, 3333);
  run = c;
  apply_ds_config(load(R"({"train_batch_size": 8, "zero_optimization": {"overlap_comm": false}})",
                       run, given("--zero-stage")),
                  given("--zero-stage"), run);
  EXPECT_EQ(run.zero.stage, 3);
  EXPECT_FALSE(run.zero.overlap_comm);
  // Not given: the file (or DeepSpeed's default) decides.
  run = c;
  apply_ds_config(load(R"({"train_batch_size": 8})", run, {}), {}, run);
  EXPECT_EQ(run.zero.stage, 0);
  EXPECT_EQ(run.zero.reduce_bucket_size, 500'000'000);
  for (const auto& [text, flag] : std::vector<std::pair<std::string, std::string>>{
           {R"({"train_batch_size": 8, "zero_optimization": {"stage": 1}})", "--zero-stage"},
           {R"({"train_batch_size": 8, "zero_optimization": {"reduce_bucket_size": 5}})",
            "--reduce-bucket-size"},
           {R"({"train_batch_size": 8, "zero_optimization": {"stage": 3,
               "stage3_param_persistence_threshold": 5}})",
            "--stage3-persistence-threshold"},
           {R"({"train_batch_size": 8, "zero_optimization": {"stage": 3,
               "stage3_prefetch_bucket_size": 5}})",
            "--stage3-prefetch-bucket-size"},
           {R"({"train_batch_size": 8, "zero_optimization": {"stage": 3,
               "stage3_max_live_parameters": 5}})",
            "--stage3-max-live-parameters"}}) {
    const std::string e = error_of(text, c, g);
    const std::string value = flag == "--zero-stage" ? "1" : "5";
    EXPECT_NE(e.find("the config gives " + value + " but " + flag), std::string::npos) << e;
  }
}

// Issue 13: reduce_bucket_size had three bounds (>= 0 in config, > 0 and >= 1 in train). One
// bound, DeepSpeed's (>= 0): a 0 passes config check and train alike; -1 fails both, naming the
// key.
TEST(DsTrainConfig, ReduceBucketSizeHasOneBound) {
  TrainConfig c;
  const std::string zero =
      R"({"train_batch_size": 8, "zero_optimization": {"reduce_bucket_size": 0}})";
  EXPECT_EQ(error_of(zero, c), "no error");
  apply_ds_config(load(zero, c, {}), {}, c);
  EXPECT_EQ(c.zero.reduce_bucket_size, 0);
  const std::string negative =
      R"({"train_batch_size": 8, "zero_optimization": {"reduce_bucket_size": -1}})";
  EXPECT_NE(error_of(negative).find("zero_optimization.reduce_bucket_size"), std::string::npos);
  TrainConfig flag;
  flag.zero.reduce_bucket_size = -1;
  EXPECT_THROW(
      {
        try {
          validate_train_config(flag);
        } catch (const ValueError& e) {
          EXPECT_STREQ(e.what(),
                       "[config] zero_optimization.reduce_bucket_size (--reduce-bucket-size): "
                       "must be >= 0, got -1");
          throw;
        }
      },
      ValueError);
}

}  // namespace
}  // namespace zt::train
