"""Bad ds_config files. The invalid half of the ds_config corpus
(tests/fixtures/ds_configs/invalid/, each with its *.expect.json sidecar: the flags and the expected message) runs through
`zerotrain config check`, and a few more through `zerotrain train --deepspeed`: broken JSON,
nesting, repeated keys, raw bytes, absurd values."""
import glob
import json
import os

from case import Case
from fixtures import ROOT, TRAIN_FLAGS

INVALID = os.path.join(ROOT, "tests", "fixtures", "ds_configs", "invalid")
FLAGS = {"world_size": "--world-size", "lr": "--lr", "dtype": "--dtype"}


def corpus_cases():
    out = []
    for path in sorted(glob.glob(os.path.join(INVALID, "*.json"))):
        if path.endswith(".expect.json"):
            continue
        with open(path[:-len(".json")] + ".expect.json") as f:
            side = json.load(f)
        argv = ["config", "check", path]
        for key, value in side["overrides"].items():
            argv += [FLAGS[key], str(value)]
        name = os.path.basename(path)[:-len(".json")]
        out.append(Case(name=f"ds_{name}", family="ds_config", argv=argv,
                        expect=side["error"][0]))
    return out


def train_case(name, text, expect, extra=()):
    return Case(name=f"ds_train_{name}", family="ds_config",
                argv=["train", "--model", "{config}", "--data", "{tokens}", "--out", "{d}/out",
                      "--deepspeed", "{d}/ds.json"] + TRAIN_FLAGS + list(extra),
                files={"ds.json": text}, expect=expect)


def cases():
    return corpus_cases() + [
        train_case("empty", "", "not valid JSON"),
        train_case("not_json", "zero_optimization: {stage: 3}", "not valid JSON"),
        train_case("binary", b"\xff\xfe{\x00\x01", "not valid JSON"),
        train_case("array", "[]", "expected"),
        train_case("deep", "[" * 70000 + "]" * 70000, "nested deeper than 64 levels"),
        train_case("deep_in_section", '{"zero_optimization": ' + '{"a": ' * 200 + "1" + "}" * 201,
                   "nested deeper than 64 levels"),
        train_case("duplicate_key", '{"train_micro_batch_size_per_gpu": 2, '
                   '"train_micro_batch_size_per_gpu": 4}', "appears more than once"),
        train_case("stage_7", '{"zero_optimization": {"stage": 7}}', "zero_optimization.stage"),
        # Found by fuzzing (fuzz_ds_config): a stage past int64 was converted to an integer.
        train_case("stage_1e92", '{"train_batch_size": 8, "zero_optimization": {"stage": '
                   + "5" * 92 + '2, "offload_optimizer": {"ratio": 0.5}}}', "zero_optimization.stage"),
        # Found by fuzzing: gradient_accumulation_steps 2e47 beside an "auto" train_batch_size
        # was converted to an integer.
        train_case("grad_accum_2e47_auto_batch", '{"train_batch_size": "auto", '
                   '"train_micro_batch_size_per_gpu": "auto", "gradient_accumulation_steps": '
                   + "1" + "9" * 47 + "}", 'train_batch_size: "auto" is not resolved'),
        train_case("stage_string", '{"zero_optimization": {"stage": "three"}}',
                   "zero_optimization.stage"),
        train_case("micro_batch_zero", '{"train_micro_batch_size_per_gpu": 0}',
                   "train_micro_batch_size_per_gpu"),
        train_case("micro_batch_2_63", '{"train_micro_batch_size_per_gpu": 9223372036854775807}',
                   "train_micro_batch_size_per_gpu"),
        train_case("micro_batch_2_64", '{"train_micro_batch_size_per_gpu": 18446744073709551616}',
                   "train_micro_batch_size_per_gpu"),
        train_case("batch_mismatch", '{"train_batch_size": 3, "train_micro_batch_size_per_gpu": 2}',
                   "train_batch_size"),
        train_case("unknown_section_key", '{"zero_optimization": {"stagee": 2}}',
                   "zero_optimization.stagee"),
        train_case("raw_bytes_in_key", '{"zero_optimization": {"\\u001b[2Jstage": 2}}',
                   r"\u001b[2Jstage"),
        train_case("lr_string", '{"optimizer": {"type": "AdamW", "params": {"lr": "fast"}}}',
                   "optimizer.params.lr"),
        train_case("optimizer_unknown", '{"optimizer": {"type": "Shampoo"}}', "optimizer.type"),
        train_case("clip_negative", '{"gradient_clipping": -1}', "gradient_clipping"),
        train_case("bucket_2_64", '{"zero_optimization": {"stage": 2, '
                   '"reduce_bucket_size": 1e30}}', "reduce_bucket_size"),
        train_case("offload_device_gpu", '{"zero_optimization": {"stage": 3, "offload_param": '
                   '{"device": "gpu"}}}', "offload_param.device"),
        train_case("scheduler_unknown", '{"scheduler": {"type": "Plateau"}}', "scheduler.type"),
        train_case("fp16_and_bf16", '{"fp16": {"enabled": true}, "bf16": {"enabled": true}}',
                   "bf16"),
    ] + [Case(name="ds_train_missing_file", family="ds_config",
              argv=["train", "--model", "{config}", "--data", "{tokens}", "--out", "{d}/out",
                    "--deepspeed", "{d}/absent.json"] + TRAIN_FLAGS,
              expect="absent.json"),
         Case(name="ds_check_missing_file", family="ds_config",
              argv=["config", "check", "{d}/absent.json"], expect="absent.json"),
         Case(name="ds_check_directory", family="ds_config", argv=["config", "check", "{d}"],
              expect="{d}")]
