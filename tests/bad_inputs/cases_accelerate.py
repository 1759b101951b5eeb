"""Accelerate config files (issue 37): `zerotrain train --accelerate-config`, `zerotrain launch
--config-file` and `zerotrain config check --accelerate-config` given a file that is not YAML, a
value of the wrong type, a key Accelerate would refuse, or settings that contradict the command
line: one line naming the key (config/accelerate_config.h), before any rank starts."""
from case import Case
from cases_special_files import fifo
from fixtures import TRAIN_FLAGS, with_flags

TRAIN = ["train", "--model", "{config}", "--data", "{tokens}", "--out", "{d}/out"] + TRAIN_FLAGS
ONE = "distributed_type: NO\n"
DS = "distributed_type: DEEPSPEED\nnum_processes: 1\n"


def train_case(name, yaml, expect, extra=(), rc=1, files=None):
    return Case(name=f"accelerate_{name}", family="accelerate",
                argv=TRAIN + ["--accelerate-config", "{d}/acc.yaml"] + list(extra), expect=expect,
                rc=rc, files={"acc.yaml": yaml, **(files or {})})


def check_case(name, yaml, expect, rc=1):
    return Case(name=f"accelerate_check_{name}", family="accelerate",
                argv=["config", "check", "--accelerate-config", "{d}/acc.yaml"], expect=expect,
                rc=rc, files={"acc.yaml": yaml})


def launch_case(name, argv, yaml, expect, rc=1):
    return Case(name=f"accelerate_launch_{name}", family="accelerate",
                argv=["launch"] + argv + ["--", "true"], expect=expect, rc=rc,
                files={"acc.yaml": yaml})


def cases():
    return [
        train_case("not_yaml", "distributed_type: [DEEPSPEED\n", "acc.yaml: not YAML: line"),
        train_case("binary", "\x00\x01\x02 distributed_type", "expected a YAML map of settings, got \"\\u0001"),
        train_case("deep_nesting", "a: " + "[" * 50000, "acc.yaml: not YAML"),
        train_case("empty", "", "expected a YAML map of settings, got null"),
        train_case("top_list", "- distributed_type\n", "expected a YAML map of settings, got a list"),
        train_case("no_type", "num_processes: 1\n", "distributed_type: missing"),
        train_case("type_xla", "distributed_type: XLA\nnum_processes: 1\n",
                   'distributed_type: "XLA" is not run by zerotrain'),
        train_case("type_map", "distributed_type: {a: 1}\n", "distributed_type: expected a value"),
        train_case("nproc_text", "distributed_type: MULTI_CPU\nnum_processes: two\n",
                   'num_processes: expected an integer, got "two"'),
        train_case("nproc_zero", "distributed_type: MULTI_CPU\nnum_processes: 0\n",
                   "num_processes: must be at least 1"),
        train_case("nproc_missing", "distributed_type: MULTI_GPU\n", "num_processes: not set"),
        train_case("use_cpu_text", ONE + "use_cpu: perhaps\n", "use_cpu: expected true or false"),
        train_case("unknown_key", ONE + "num_procesess: 1\n",
                   "num_procesess: unknown key (Accelerate refuses it too); did you mean "
                   "num_processes?"),
        train_case("repeated_key", ONE + "use_cpu: true\nuse_cpu: false\n",
                   "use_cpu: repeated key"),
        train_case("fp8", ONE + "mixed_precision: fp8\n", "mixed_precision: fp8 is not run"),
        train_case("precision_text", ONE + "mixed_precision: half\n",
                   'mixed_precision: expected no, fp16 or bf16, got "half"'),
        train_case("sagemaker", "compute_environment: AMAZON_SAGEMAKER\n" + ONE,
                   'compute_environment: "AMAZON_SAGEMAKER" is not run'),
        train_case("port", ONE + "main_process_port: 70000\n", "main_process_port: 70000 is not a port"),
        train_case("machine_rank", ONE + "machine_rank: 1\n", "machine_rank: 1 is not between 0 and"),
        train_case("uneven_machines", "distributed_type: MULTI_CPU\nnum_processes: 3\n"
                   "num_machines: 2\n", "num_processes: 3 does not split evenly"),
        train_case("no_main_ip", "distributed_type: MULTI_CPU\nnum_processes: 2\nnum_machines: 2\n",
                   "main_process_ip: needed with num_machines > 1"),
        train_case("many_machines_alone", "distributed_type: MULTI_CPU\nnum_processes: 2\n"
                   "num_machines: 2\nmain_process_ip: 10.0.0.1\nmain_process_port: 29500\n",
                   "num_machines 2: start the ranks with `zerotrain launch --config-file FILE"),
        train_case("zero_stage", DS + "deepspeed_config:\n  zero_stage: 4\n",
                   "deepspeed_config.zero_stage: expected 0, 1, 2 or 3, got 4"),
        train_case("offload_device", DS + "deepspeed_config:\n  offload_optimizer_device: gpu\n",
                   "deepspeed_config.offload_optimizer_device: expected one of none, cpu, nvme"),
        train_case("clipping_text", DS + "deepspeed_config:\n  gradient_clipping: lots\n",
                   'deepspeed_config.gradient_clipping: expected a number, got "lots"'),
        train_case("plugin_section_list", DS + "deepspeed_config: [1, 2]\n",
                   "deepspeed_config: expected a map, got a list"),
        train_case("plugin_beside_file", DS + "deepspeed_config:\n  deepspeed_config_file: ds.json\n"
                   "  gradient_accumulation_steps: 2\n",
                   "deepspeed_config.gradient_accumulation_steps: set beside deepspeed_config_file",
                   files={"ds.json": '{"zero_optimization": {}}'}),
        train_case("ds_file_missing", DS + "deepspeed_config:\n  deepspeed_config_file: none.json\n",
                   "none.json"),
        train_case("ds_file_not_object", DS + "deepspeed_config:\n  deepspeed_config_file: ds.json\n",
                   "ds.json holds an array [1], not a DeepSpeed config object", files={"ds.json": "[1]"}),
        train_case("ds_file_no_zero", DS + "deepspeed_config:\n  deepspeed_config_file: ds.json\n",
                   "has no zero_optimization section (Accelerate requires one)",
                   files={"ds.json": '{"train_micro_batch_size_per_gpu": 2}'}),
        train_case("ds_file_other_precision", DS + "mixed_precision: fp16\ndeepspeed_config:\n"
                   "  deepspeed_config_file: ds.json\n",
                   "mixed_precision: fp16 but the DeepSpeed config enables bf16",
                   files={"ds.json": '{"bf16": {"enabled": true}, "zero_optimization": {}}'}),
        train_case("fsdp_strategy", "distributed_type: FSDP\nnum_processes: 1\nfsdp_config:\n"
                   "  fsdp_sharding_strategy: HALF_SHARD\n",
                   "fsdp_config.fsdp_sharding_strategy: expected FULL_SHARD"),
        train_case("fsdp_two_strategies", "distributed_type: FSDP\nnum_processes: 1\nfsdp_config:\n"
                   "  fsdp_sharding_strategy: FULL_SHARD\n  fsdp_reshard_after_forward: false\n",
                   "fsdp_config.fsdp_reshard_after_forward: SHARD_GRAD_OP but "
                   "fsdp_sharding_strategy is FULL_SHARD"),
        train_case("fsdp_no_shard_offload", "distributed_type: FSDP\nnum_processes: 1\n"
                   "fsdp_config:\n  fsdp_sharding_strategy: NO_SHARD\n  fsdp_offload_params: true\n",
                   "fsdp_config.fsdp_offload_params: with NO_SHARD"),
        train_case("fsdp_fp16_loaded", "distributed_type: FSDP\nnum_processes: 1\n"
                   "fsdp_config:\n  fsdp_state_dict_type: SHARDED_STATE_DICT\n",
                   "mixed_precision: no, with --dtype fp16 under FSDP", extra=["--dtype", "fp16"]),
        train_case("with_deepspeed", ONE, "--deepspeed and --accelerate-config: give one",
                   extra=["--deepspeed", "{d}/ds.json"], files={"ds.json": "{}"}),
        train_case("nproc_disagrees", "distributed_type: MULTI_CPU\nnum_processes: 2\n",
                   "--nproc 3 but", extra=["--nproc", "3"]),
        Case(name="accelerate_device_disagrees", family="accelerate",
             argv=with_flags(TRAIN, ["--device", "cuda", "--accelerate-config", "{d}/acc.yaml"]),
             expect="--device cuda but {d}/acc.yaml runs on the CPU (use_cpu: true)",
             files={"acc.yaml": ONE + "use_cpu: true\n"}),
        train_case("key_not_text", ONE + "\"\\x01\\x02\": 1\n", "top level: a key that is not a name"),
        train_case("dtype_disagrees", ONE + "mixed_precision: bf16\n",
                   "fp16.enabled: the config gives false but --dtype fp16 gives true",
                   extra=["--dtype", "fp16"]),
        Case(name="accelerate_fifo", family="accelerate",
             argv=TRAIN + ["--accelerate-config", "{d}/acc.yaml"],
             expect="acc.yaml is a FIFO, not a regular file", setup=fifo("acc.yaml")),
        train_case("directory", ONE, "--accelerate-config: File does not exist", rc=2,
                   extra=["--accelerate-config", "{d}/nothing.yaml"]),
        check_case("not_yaml", "a: b: c\n", "acc.yaml: not YAML"),
        check_case("world_size", "distributed_type: MULTI_CPU\nnum_processes: two\n",
                   "num_processes: expected an integer"),
        Case(name="accelerate_check_both", family="accelerate",
             argv=["config", "check", "{d}/ds.json", "--accelerate-config", "{d}/acc.yaml"],
             expect="give one of FILE and --accelerate-config FILE", rc=2,
             files={"acc.yaml": ONE, "ds.json": "{}"}),
        launch_case("with_n", ["-n", "2", "--config-file", "{d}/acc.yaml"], ONE,
                    "-n: 2 and --config-file: give one", rc=2),
        launch_case("mpi_many_machines", ["--mpi", "--config-file", "{d}/acc.yaml"],
                    "distributed_type: MULTI_CPU\nnum_processes: 2\nnum_machines: 2\n"
                    "main_process_ip: 10.0.0.1\nmain_process_port: 29500\n",
                    "--mpi with {d}/acc.yaml's num_machines 2"),
        launch_case("port_disagrees", ["--port", "29501", "--config-file", "{d}/acc.yaml"],
                    ONE + "main_process_port: 29500\n",
                    "--port 29501 but {d}/acc.yaml has main_process_port 29500"),
        launch_case("bad_file", ["--config-file", "{d}/acc.yaml"], "num_processes: [\n",
                    "acc.yaml: not YAML"),
    ]
