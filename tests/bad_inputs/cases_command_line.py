"""Bad command lines: every subcommand with missing, unknown, malformed, negative, out-of-range
and past-64-bit values. Parse errors exit 2 (cli/main.cpp); values refused by a check after
parsing exit 1 or 2 as the case says."""
from case import Case
from fixtures import TRAIN_FLAGS, with_flags

TRAIN = ["train", "--model", "{config}", "--data", "{tokens}", "--out", "{d}/out"] + TRAIN_FLAGS


def cli_case(name, argv, expect, rc=2):
    return Case(name=f"cli_{name}", family="command_line", argv=argv, expect=expect, rc=rc)


def train_flag(name, flag, value, expect, rc=2):
    return cli_case(f"train_{name}", with_flags(TRAIN, [flag, value]), expect, rc)


def cases():
    out = [
        cli_case("no_command", [], "A subcommand is required"),
        cli_case("unknown_command", ["trian"], '[zerotrain] unknown command "trian" (did you mean train?)'),
        cli_case("unknown_command_raw", ["\x1b[2Jtrain"], "unknown command"),
        cli_case("unknown_flag", TRAIN + ["--modle", "x"], "--modle"),
        cli_case("data_no_sub", ["data"], "A subcommand is required"),
        cli_case("config_no_sub", ["config"], "A subcommand is required"),
        cli_case("config_check_no_file", ["config", "check"],
                 "give one of FILE and --accelerate-config FILE"),
        cli_case("train_no_model", ["train", "--data", "{tokens}", "--out", "{d}/o"],
                 "--model is required"),
        cli_case("train_no_data", ["train", "--model", "{config}", "--out", "{d}/o"],
                 "--data is required"),
        cli_case("train_no_out", ["train", "--model", "{config}", "--data", "{tokens}"],
                 "--out is required"),
        cli_case("train_out_is_file", ["train", "--model", "{config}", "--data", "{tokens}",
                                       "--out", "{tokens}"] + TRAIN_FLAGS,
                 "cannot create the directory", rc=1),
        cli_case("train_out_under_file", ["train", "--model", "{config}", "--data", "{tokens}",
                                          "--out", "{tokens}/run"] + TRAIN_FLAGS,
                 "cannot create the directory", rc=1),
        cli_case("train_out_under_proc", ["train", "--model", "{config}", "--data", "{tokens}",
                                          "--out", "/proc/zerotrain-run"] + TRAIN_FLAGS,
                 "--out /proc/zerotrain-run", rc=1),
        cli_case("train_model_missing", ["train", "--model", "{d}/nothing", "--data", "{tokens}",
                                         "--out", "{d}/o"] + TRAIN_FLAGS,
                 "no model config at", rc=1),
        cli_case("launch_no_command", ["launch", "-n", "2"], "command is required"),
        cli_case("launch_zero_ranks", ["launch", "-n", "0", "--", "true"], "--nproc"),
        cli_case("launch_bad_grace", ["launch", "-n", "1", "--grace", "x", "--", "true"], "--grace"),
        cli_case("estimate_nothing", ["estimate"], "--params", rc=1),
        cli_case("estimate_params_word", ["estimate", "--params", "many"], "--params", rc=1),
        cli_case("estimate_params_negative", ["estimate", "--params", "-5"], "--params", rc=1),
        cli_case("estimate_params_1e30", ["estimate", "--params", "1e30", "--largest-layer", "1e6"],
                 "above the ceiling of 2^47", rc=1),
        cli_case("estimate_params_nan", ["estimate", "--params", "nan"], "--params", rc=1),
        cli_case("estimate_params_inf", ["estimate", "--params", "inf"], "--params", rc=1),
        cli_case("estimate_gpus_zero", ["estimate", "--model", "{config}", "--seq", "16",
                                        "--gpus", "0"], "--gpus: must be > 0, got 0", rc=1),
        cli_case("estimate_layer_above_model", ["estimate", "--params", "1e9", "--largest-layer",
                                                "2e9"], "--largest-layer", rc=1),
        cli_case("estimate_stage_5", ["estimate", "--params", "1e9", "--stage", "5"], "--stage: ",
                 rc=1),
        cli_case("estimate_seq_zero", ["estimate", "--model", "{config}", "--seq", "0"], "--seq"),
        cli_case("estimate_seq_negative", ["estimate", "--model", "{config}", "--seq", "-4"],
                 "--seq"),
        cli_case("estimate_micro_batch_zero", ["estimate", "--model", "{config}", "--seq", "16",
                                               "--micro-batch", "0"], "micro_batch: must be > 0", rc=1),
        cli_case("estimate_model_missing", ["estimate", "--model", "{d}/absent.json"],
                 "absent.json", rc=1),
        cli_case("estimate_gpu_memory_word", ["estimate", "--model", "{config}", "--seq", "16",
                                              "--gpu-memory", "lots"], "--gpu-memory", rc=1),
        cli_case("estimate_nodes_zero", ["estimate", "--params", "1e9", "--num-nodes", "0"],
                 "--num-nodes", rc=1),
        cli_case("config_check_world_zero", ["config", "check",
                                             "{repo}/tests/fixtures/ds_configs/valid/batch_only_micro.json",
                                             "--world-size", "0"], "--world-size"),
        cli_case("config_check_dtype_f8", ["config", "check",
                                           "{repo}/tests/fixtures/ds_configs/valid/batch_only_micro.json",
                                           "--dtype", "f8"], "--dtype"),
        cli_case("config_check_steps_64_bits", ["config", "check",
                                                "{repo}/tests/fixtures/ds_configs/valid/batch_only_micro.json",
                                                "--steps", "99999999999999999999"], "--steps"),
        cli_case("data_prepare_no_input", ["data", "prepare", "--tokenizer", "{tokenizer}",
                                           "--output", "{d}/o.bin"], "--input is required"),
        cli_case("data_prepare_fields_conflict", [
            "data", "prepare", "--tokenizer", "{tokenizer}", "--input", "{text}", "--output",
            "{d}/o.bin", "--text-field", "t", "--prompt-field", "p", "--completion-field", "c"],
            "excludes"),
        cli_case("data_prepare_empty_text_field", [
            "data", "prepare", "--tokenizer", "{tokenizer}", "--input", "{text}", "--output",
            "{d}/o.bin", "--text-field", ""], "--text-field: must be a name, got an empty string"),
        cli_case("data_prepare_empty_messages_field", [
            "data", "prepare", "--tokenizer", "{tokenizer}", "--input", "{text}", "--output",
            "{d}/o.bin", "--messages-field", ""], "--messages-field: must be a name"),
        cli_case("data_prepare_prompt_without_completion", [
            "data", "prepare", "--tokenizer", "{tokenizer}", "--input", "{text}", "--output",
            "{d}/o.bin", "--prompt-field", "p"], "requires --completion-field"),
    ]
    integer_flags = ["--steps", "--micro-batch", "--seq-len", "--grad-accum", "--warmup",
                     "--log-every", "--save-every", "--seed", "--zero-stage",
                     "--reduce-bucket-size", "--check-params-every", "--sub-group-size",
                     "--stage3-prefetch-bucket-size", "--stage3-max-live-parameters"]
    for flag in integer_flags:
        tag = flag[2:].replace("-", "_")
        out.append(train_flag(f"{tag}_word", flag, "ten", flag))
        out.append(train_flag(f"{tag}_past_64_bits", flag, "99999999999999999999",
                              f'{flag}: "99999999999999999999" does not fit in a 64-bit'))
        out.append(train_flag(f"{tag}_float", flag, "2.5", flag))
    for flag in ["--steps", "--micro-batch", "--seq-len", "--grad-accum", "--log-every"]:
        tag = flag[2:].replace("-", "_")
        out.append(train_flag(f"{tag}_zero", flag, "0", f"{flag}): must be > 0, got 0"
                              if flag != "--seq-len" else "--seq-len: must be > 0, got 0", rc=1))
        out.append(train_flag(f"{tag}_negative", flag, "-1", f"{flag}): must be > 0, got -1"
                              if flag != "--seq-len" else "--seq-len: must be > 0, got -1", rc=1))
    out += [
        train_flag("seq_len_past_max_positions", "--seq-len", "65",
                   "seq_len 65 (--seq-len) exceeds the model's max_position_embeddings 64", rc=1),
        train_flag("micro_batch_2_62", "--micro-batch", str(2**62), "--micro-batch", rc=1),
        train_flag("seq_len_2_62", "--seq-len", str(2**62),
                   "2 x 1 x 4611686018427387904 tokens per step is above the ceiling", rc=1),
        train_flag("grad_accum_2_62", "--grad-accum", str(2**62),
                   "tokens per step is above the ceiling of 2^48", rc=1),
        train_flag("warmup_negative", "--warmup", "-1", "warmup", rc=1),
        train_flag("seed_negative", "--seed", "-1", '--seed: must be >= 0, got "-1"'),
        cli_case("generate_seed_negative", ["generate", "--model", "{model}", "--prompt", "a",
                                            "--seed", "-1"], '--seed: must be >= 0, got "-1"'),
        cli_case("estimate_buffer_factor_1e308", ["estimate", "--params", "1e9", "--largest-layer",
                                                  "1e8", "--buffer-factor", "1e308"],
                 "is past 2^63", rc=1),
        train_flag("save_every_negative", "--save-every", "-5", "--save-every: must be >= 0", rc=1),
        train_flag("zero_stage_4", "--zero-stage", "4", "stage", rc=1),
        train_flag("zero_stage_negative", "--zero-stage", "-1", "stage", rc=1),
        train_flag("lr_negative", "--lr", "-1", "lr", rc=1),
        train_flag("lr_word", "--lr", "fast", "--lr"),
        train_flag("lr_nan", "--lr", "nan", "lr", rc=1),
        train_flag("lr_inf", "--lr", "inf", "lr", rc=1),
        train_flag("beta1_one", "--beta1", "1", "beta1", rc=1),
        train_flag("beta2_negative", "--beta2", "-0.1", "beta2", rc=1),
        train_flag("eps_negative", "--eps", "-1e-8", "eps", rc=1),
        train_flag("weight_decay_negative", "--weight-decay", "-0.1", "weight_decay", rc=1),
        train_flag("weight_decay_mode", "--weight-decay-mode", "l3", "--weight-decay-mode"),
        train_flag("min_lr_ratio_negative", "--min-lr-ratio", "-0.5", "min_lr_ratio", rc=1),
        train_flag("min_lr_ratio_above_one", "--min-lr-ratio", "2", "min_lr_ratio", rc=1),
        train_flag("schedule_unknown", "--schedule", "exponential", "exponential", rc=1),
        train_flag("clip_negative", "--clip", "-1", '--clip: must be >= 0, got "-1"'),
        train_flag("clip_word", "--clip", "none", "--clip"),
        train_flag("plot_every_negative", "--plot-every", "-1", '--plot-every: must be >= 0'),
        train_flag("device_gpu", "--device", "gpu", "gpu", rc=1),
        train_flag("device_cuda_word", "--device", "cuda:x", "cuda:x", rc=1),
        train_flag("dtype_f8", "--dtype", "f8", "--dtype"),
        train_flag("precision_half", "--precision", "half", "--precision"),
        train_flag("precision_low_f32", "--precision", "low", "low", rc=1),
        train_flag("grad_accum_dtype_f64", "--grad-accum-dtype", "f64", "--grad-accum-dtype"),
        train_flag("comm_dtype_int8", "--comm-dtype", "int8", "--comm-dtype"),
        train_flag("nproc_zero", "--nproc", "0", "--nproc"),
        train_flag("nproc_too_many", "--nproc", "100000", "--nproc"),
        train_flag("offload_optimizer_gpu", "--offload-optimizer", "gpu", "--offload-optimizer"),
        train_flag("offload_optimizer_stage_0", "--offload-optimizer", "cpu", "offload", rc=1),
        train_flag("offload_param_stage_0", "--offload-param", "cpu", "offload", rc=1),
        train_flag("gpu_memory_cap_cpu_run", "--gpu-memory-cap", "1GiB", "--gpu-memory-cap", rc=1),
        train_flag("host_memory_cap_word", "--host-memory-cap", "lots", "--host-memory-cap", rc=1),
        train_flag("host_memory_cap_negative", "--host-memory-cap", "-1GiB", "--host-memory-cap",
                   rc=1),
        train_flag("host_memory_cap_word_unit", "--host-memory-cap", "1KiB",
                   '--host-memory-cap: expected a size like 80GiB', rc=1),
        train_flag("host_memory_cap_tiny", "--host-memory-cap", "0.0001",
                   "[train] out of memory in step 1 on cpu", rc=1),
        train_flag("init_bogus", "--init", "bogus", "--init"),
        train_flag("resume_missing", "--resume", "{d}/absent", "--resume: Directory does not exist"),
        train_flag("deepspeed_missing", "--deepspeed", "{d}/absent.json", "absent.json", rc=1),
        train_flag("stage3_threshold_negative", "--stage3-persistence-threshold", "-1",
                   "persistence", rc=1),
        cli_case("train_nvme_path_missing", TRAIN + [
            "--zero-stage", "3", "--offload-optimizer", "nvme", "--nvme-path", "{d}/absent"],
            "absent", rc=1),
        cli_case("train_nvme_without_path", TRAIN + [
            "--zero-stage", "3", "--offload-optimizer", "nvme"], "nvme", rc=1),
        cli_case("train_seq_len_twice", TRAIN + ["--seq-len", "8"], "--seq-len"),
    ]
    return out
