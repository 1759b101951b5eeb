"""Bad checkpoints given to `zerotrain train --resume` (today's single-process format,
src/zerotrain/train/checkpoint.h: model/, optimizer.safetensors, train_state.json, COMPLETE). Each
case copies the base checkpoint the corpus makes with one training step and breaks one thing."""
import json
import os
import shutil
import struct

from case import Case
from fixtures import TRAIN_FLAGS, st_file, tiny_weights, with_flags

RESUME_FLAGS = ["--device", "cpu", "--steps", "2"] + TRAIN_FLAGS[4:]


def ckpt_case(name, expect, change, rc=1, resume="{d}/ck", extra=(), f16=False):
    def setup(d, fx):
        shutil.copytree(fx.ckpt16 if f16 else fx.ckpt, os.path.join(d, "ck"))
        change(os.path.join(d, "ck"))
    return Case(name=f"ckpt_{name}", family="checkpoint",
                argv=["train", "--model", "{model}", "--data", "{tokens}", "--out", "{d}/out",
                      "--resume", resume] +
                with_flags(RESUME_FLAGS, list(extra) + (["--dtype", "f16"] if f16 else [])),
                expect=expect, setup=setup, rc=rc)


def remove(rel):
    def change(ck):
        p = os.path.join(ck, rel)
        shutil.rmtree(p) if os.path.isdir(p) else os.remove(p)
    return change


def write(rel, data):
    def change(ck):
        with open(os.path.join(ck, rel), "wb") as f:
            f.write(data.encode() if isinstance(data, str) else data)
    return change


def state(fn):
    """train_state.json changed by fn(state) (which may return a replacement)."""
    def change(ck):
        path = os.path.join(ck, "train_state.json")
        with open(path) as f:
            s = json.load(f)
        s = fn(s) or s
        with open(path, "w") as f:
            json.dump(s, f)
    return change


def set_key(path, value):
    def fn(s):
        node = s
        for k in path[:-1]:
            node = node[k]
        if value is DELETE:
            del node[path[-1]]
        else:
            node[path[-1]] = value
    return state(fn)


DELETE = object()


def optimizer(fn):
    """optimizer.safetensors rewritten from fn(header, data) -> (header, data)."""
    def change(ck):
        path = os.path.join(ck, "optimizer.safetensors")
        with open(path, "rb") as f:
            raw = f.read()
        n = struct.unpack("<Q", raw[:8])[0]
        header, data = fn(json.loads(raw[8:8 + n]), raw[8 + n:])
        with open(path, "wb") as f:
            f.write(st_file(header, data))
    return change


def drop_tensor(name):
    def fn(h, data):
        begin, end = h[name]["data_offsets"]
        del h[name]
        for k, v in h.items():
            if k != "__metadata__" and v["data_offsets"][0] >= end:
                v["data_offsets"] = [v["data_offsets"][0] - (end - begin),
                                     v["data_offsets"][1] - (end - begin)]
        return h, data[:begin] + data[end:]
    return optimizer(fn)


def metadata_step(value):
    def fn(h, data):
        h["__metadata__"] = {"step": value} if value is not None else {}
        return h, data
    return optimizer(fn)


def cases():
    out = [
        ckpt_case("no_complete", "no COMPLETE marker", remove("COMPLETE")),
        ckpt_case("empty_directory", "no COMPLETE marker",
                  lambda ck: (shutil.rmtree(ck), os.makedirs(ck))),
        ckpt_case("out_directory_given", "no COMPLETE marker", lambda ck: None, resume="{d}"),
        ckpt_case("resume_missing", "--resume: Directory does not exist", lambda ck: None,
                  resume="{d}/absent", rc=2),
        ckpt_case("resume_is_file", "--resume: Directory is actually a file", lambda ck: None,
                  resume="{d}/ck/COMPLETE", rc=2),
        ckpt_case("state_missing", "train_state.json", remove("train_state.json")),
        ckpt_case("state_is_directory", "train_state.json",
                  lambda ck: (os.remove(os.path.join(ck, "train_state.json")),
                              os.makedirs(os.path.join(ck, "train_state.json")))),
        ckpt_case("state_empty", "train_state.json: not valid JSON", write("train_state.json", "")),
        ckpt_case("state_not_json", "train_state.json: not valid JSON",
                  write("train_state.json", "step: 1")),
        ckpt_case("state_binary", "train_state.json: not valid JSON",
                  write("train_state.json", b"\x00\xff\x1b[2J")),
        ckpt_case("state_truncated", "train_state.json: not valid JSON",
                  write("train_state.json", '{"step": 1, "data": {"epoch"')),
        ckpt_case("state_array", "train_state.json: not a JSON object",
                  write("train_state.json", "[1]")),
        ckpt_case("state_deep", "nested deeper than 64 levels",
                  write("train_state.json", "[" * 70000 + "]" * 70000)),
        ckpt_case("state_duplicate_step", "appears more than once",
                  write("train_state.json", '{"step": 1, "step": 0, "data": {}, "config": {}}')),
        ckpt_case("step_negative", "step must be a non-negative integer", set_key(["step"], -1)),
        ckpt_case("step_string", "step must be a non-negative integer", set_key(["step"], "1")),
        ckpt_case("step_float", "step must be a non-negative integer", set_key(["step"], 1.5)),
        ckpt_case("step_null", "step must be a non-negative integer", set_key(["step"], None)),
        ckpt_case("step_2_63", "step must be a non-negative integer", set_key(["step"], 2**63)),
        ckpt_case("step_2_64_minus_1", "step must be a non-negative integer",
                  set_key(["step"], 2**64 - 1)),
        ckpt_case("step_at_steps", "is already at step 2", set_key(["step"], 2)),
        ckpt_case("step_huge", "is already at step 9223372036854775807",
                  set_key(["step"], 2**63 - 1)),
        ckpt_case("data_string", "state: expected an object", set_key(["data"], "epoch 0")),
        ckpt_case("data_long_raw_string", "state: expected an object",
                  set_key(["data"], "\x1b[2J" + "x" * 100000)),
        ckpt_case("data_no_epoch", "epoch", set_key(["data", "epoch"], DELETE)),
        ckpt_case("data_epoch_negative", "epoch", set_key(["data", "epoch"], -1)),
        ckpt_case("data_epoch_string", "epoch", set_key(["data", "epoch"], "0")),
        ckpt_case("data_next_index_past_end", "state.next_index 1000000 is past the end",
                  set_key(["data", "next_index"], 10**6)),
        ckpt_case("data_next_index_2_64_minus_1", "next_index",
                  set_key(["data", "next_index"], 2**64 - 1)),
        ckpt_case("data_next_index_float", "next_index", set_key(["data", "next_index"], 2.5)),
        ckpt_case("config_string", "seq_len", set_key(["config"], "seq_len 16")),
        ckpt_case("config_seq_len_differs", "seq_len is 16 but the checkpoint was saved with seq_len 32",
                  set_key(["config", "seq_len"], 32)),
        ckpt_case("config_micro_batch_missing", "micro_batch is 2 but the checkpoint was saved "
                  "with micro_batch missing", set_key(["config", "micro_batch"], DELETE)),
        ckpt_case("config_dtype_differs", 'dtype is "f32" but the checkpoint was saved with dtype',
                  set_key(["config", "dtype"], "bf16")),
        ckpt_case("config_seed_string", "seed is 1234 but the checkpoint was saved with seed",
                  set_key(["config", "seed"], "1234")),
        ckpt_case("config_seed_long_raw", "seed is 1234 but the checkpoint was saved with seed",
                  set_key(["config", "seed"], "\x1b[2J" + "9" * 100000)),
        ckpt_case("config_grad_accum_deep", "grad_accum is 1 but the checkpoint was saved with",
                  set_key(["config", "grad_accum"], [[[[[[[[[[1]]]]]]]]]])),
        ckpt_case("scheduler_string", "scheduler", set_key(["scheduler"], "cosine")),
        ckpt_case("scheduler_wrong_type", "scheduler", set_key(["scheduler", "type"], "linear")),
        ckpt_case("scheduler_iteration_string", "last_batch_iteration",
                  set_key(["scheduler", "last_batch_iteration"], "0")),
        ckpt_case("scheduler_type_long_raw", "[scheduler] state type", set_key(
            ["scheduler", "type"], "\x1b[2J" + "c" * 100000)),
        ckpt_case("scheduler_iteration_deep", "[scheduler] state last_batch_iteration", set_key(
            ["scheduler", "last_batch_iteration"], [[[[[[[[[[[[0]]]]]]]]]]]])),
        ckpt_case("scheduler_long_string", "[scheduler] state: expected a JSON object", set_key(
            ["scheduler"], "x" * 100000)),
        ckpt_case("optimizer_missing", "optimizer.safetensors", remove("optimizer.safetensors")),
        ckpt_case("optimizer_empty", "too few for the 8-byte header length",
                  write("optimizer.safetensors", b"")),
        ckpt_case("optimizer_not_safetensors", "optimizer.safetensors",
                  write("optimizer.safetensors", b"PK\x03\x04" * 16)),
        ckpt_case("optimizer_truncated", "exceeds the file (2000 bytes)",
                  lambda ck: open(os.path.join(ck, "optimizer.safetensors"), "r+b").truncate(2000)),
        ckpt_case("optimizer_no_step", 'metadata has no "step"', metadata_step(None)),
        ckpt_case("optimizer_step_word", "is not an integer", metadata_step("one")),
        ckpt_case("optimizer_step_raw", "is not an integer", metadata_step("\x1b[2J\x07")),
        ckpt_case("optimizer_step_trailing", "is not an integer", metadata_step("1abc")),
        ckpt_case("optimizer_step_huge", "is not an integer", metadata_step("9" * 40)),
        ckpt_case("optimizer_lacks_moment", "model.norm.weight.exp_avg",
                  drop_tensor("model.norm.weight.exp_avg")),
        ckpt_case("optimizer_lacks_master_or_moment", "model.embed_tokens.weight",
                  drop_tensor("model.embed_tokens.weight.exp_avg_sq")),
        ckpt_case("optimizer_wrong_shape", "model.norm.weight.exp_avg", optimizer(
            lambda h, d: (h.__setitem__("model.norm.weight.exp_avg", dict(
                h["model.norm.weight.exp_avg"], shape=[4, 4])) or h, d))),
        ckpt_case("model_missing", "model", remove("model")),
        ckpt_case("model_weights_missing", "neither model.safetensors nor", remove("model/model.safetensors")),
        ckpt_case("model_weights_truncated", "truncated file?", lambda ck: open(
            os.path.join(ck, "model", "model.safetensors"), "r+b").truncate(3000)),
        ckpt_case("model_weights_other_model", "the checkpoint has", write(
            "model/model.safetensors", tiny_weights(dict(
                __import__("fixtures").TINY_CONFIG, intermediate_size=48)))),
        ckpt_case("model_weights_missing_tensor", "the checkpoint lacks 1 tensor(s)", write(
            "model/model.safetensors", tiny_weights(skip=("model.norm.weight",)))),
        ckpt_case("model_dangling_symlink", "neither model.safetensors nor", lambda ck: (
            os.remove(os.path.join(ck, "model", "model.safetensors")),
            os.symlink("gone", os.path.join(ck, "model", "model.safetensors")))),
        ckpt_case("dtype_f16_against_f32", 'dtype is "f16" but the checkpoint was saved with '
                  'dtype "f32"', lambda ck: None, extra=["--dtype", "f16"]),
        ckpt_case("world_changed_batch", "micro_batch is 4 but the checkpoint was saved with "
                  "micro_batch 2", lambda ck: None, extra=["--micro-batch", "4"]),
    ]
    scaler = [
        ("missing", DELETE, "cannot resume fp16"),
        ("string", "x" * 100000, 'state has no "dynamic": a string "xxx'),
        ("dynamic_string", {"dynamic": "yes"}, 'state "dynamic" must be a boolean, got a string'),
        ("static", {"dynamic": False}, "the saved loss scaler is static but this run's is dynamic"),
        ("scale_zero", {"cur_scale": 0}, 'state "cur_scale" must be a number > 0, got an integer 0'),
        ("scale_negative", {"cur_scale": -65536.0}, 'state "cur_scale" must be a number > 0'),
        ("scale_raw_string", {"cur_scale": "\x1b[2J" + "6" * 100000}, 'state "cur_scale" must be'),
        ("iter_float", {"cur_iter": 1.5}, 'state "cur_iter" must be an integer, got a number 1.5'),
        ("iter_missing", {"cur_iter": DELETE}, 'state has no "cur_iter"'),
        ("hysteresis_zero", {"cur_hysteresis": 0}, "inconsistent state: cur_iter 1, "
         "last_overflow_iter -1, cur_hysteresis 0"),
        ("overflow_after_iter", {"last_overflow_iter": 5}, "inconsistent state: cur_iter 1, "
         "last_overflow_iter 5"),
        ("iter_negative", {"cur_iter": -3}, "inconsistent state: cur_iter -3"),
    ]
    for label, change, expect in scaler:
        if isinstance(change, dict):
            def fn(s, change=change):
                for k, v in change.items():
                    if v is DELETE:
                        del s["loss_scaler"][k]
                    else:
                        s["loss_scaler"][k] = v
            out.append(ckpt_case(f"loss_scaler_{label}", expect, state(fn), f16=True))
        else:
            out.append(ckpt_case(f"loss_scaler_{label}", expect,
                                 set_key(["loss_scaler"], change), f16=True))
    return out
