"""Bad checkpoints given to `zerotrain train --resume` and `zerotrain checkpoint` (the sharded
format, src/zerotrain/checkpoint/manifest.h: manifest.json, one safetensors shard per rank,
COMPLETE, `latest` above). Each case copies the base checkpoint the corpus makes with one training
step and breaks one thing."""
import json
import os
import shutil
import zlib

from case import Case
from fixtures import TRAIN_FLAGS, with_flags

RESUME_FLAGS = ["--device", "cpu", "--steps", "2"] + TRAIN_FLAGS[4:]
SHARD = "rank-00000-of-00001.safetensors"


def ckpt_case(name, expect, change, rc=1, resume="{d}/ck", extra=(), f16=False):
    def setup(d, fx):
        shutil.copytree(fx.ckpt16 if f16 else fx.ckpt, os.path.join(d, "ck"))
        change(os.path.join(d, "ck"))
    return Case(name=f"ckpt_{name}", family="checkpoint",
                argv=["train", "--model", "{model}", "--data", "{tokens}", "--out", "{d}/out",
                      "--resume", resume] +
                with_flags(RESUME_FLAGS, list(extra) + (["--dtype", "f16"] if f16 else [])),
                expect=expect, setup=setup, rc=rc)


def tool_case(name, expect, change, argv):
    """`zerotrain checkpoint ...` on a broken copy ({d}/ck)."""
    def setup(d, fx):
        shutil.copytree(fx.ckpt, os.path.join(d, "ck"))
        change(os.path.join(d, "ck"))
    return Case(name=f"ckpt_tool_{name}", family="checkpoint", argv=argv, expect=expect,
                setup=setup, rc=1)


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


def beside(rel):
    """A directory next to the checkpoint copy (in the case's own directory)."""
    def change(ck):
        os.makedirs(os.path.join(os.path.dirname(ck), rel))
    return change


DELETE = object()


def manifest(path, value):
    """manifest.json with the key at `path` (a list of keys and indices) set or deleted."""
    def change(ck):
        p = os.path.join(ck, "manifest.json")
        with open(p) as f:
            m = json.load(f)
        node = m
        for k in path[:-1]:
            node = node[k]
        if value is DELETE:
            del node[path[-1]]
        else:
            node[path[-1]] = value
        with open(p, "w") as f:
            json.dump(m, f)
    return change


def model_config(text):
    """The manifest's model config replaced, with its CRC-32 made to match (the deeper checks)."""
    def change(ck):
        manifest(["model_config"], text)(ck)
        manifest(["model_config_crc32"], "%08x" % zlib.crc32(text.encode()))(ck)
    return change


def shard_bytes(fn):
    """The shard file rewritten as fn(bytes) -> bytes."""
    def change(ck):
        p = os.path.join(ck, SHARD)
        with open(p, "rb") as f:
            raw = f.read()
        with open(p, "wb") as f:
            f.write(fn(raw))
    return change


def flip(offset_from_end):
    return shard_bytes(lambda raw: raw[:-offset_from_end] + bytes([raw[-offset_from_end] ^ 0x20]) +
                       raw[len(raw) - offset_from_end + 1:])


TENSOR0 = ["files", 0, "tensors", 0]


def cases():
    out = [
        ckpt_case("no_complete", "is not a complete checkpoint", remove("COMPLETE")),
        ckpt_case("empty_directory", "holds no complete checkpoint",
                  lambda ck: (shutil.rmtree(ck), os.makedirs(ck))),
        ckpt_case("resume_missing", "--resume: Directory does not exist", lambda ck: None,
                  resume="{d}/absent", rc=2),
        ckpt_case("resume_is_file", "--resume: Directory is actually a file", lambda ck: None,
                  resume="{d}/ck/COMPLETE", rc=2),
        ckpt_case("partial_save", "is not a complete checkpoint",
                  lambda ck: (os.rename(ck, ck + ".partial-00000000abcd"), os.makedirs(ck),
                              os.rename(ck + ".partial-00000000abcd", os.path.join(ck, "step-00000001.partial-0")),
                              os.remove(os.path.join(ck, "step-00000001.partial-0", "COMPLETE"))),
                  resume="{d}/ck/step-00000001.partial-0"),
        ckpt_case("old_format", "old single-process format",
                  lambda ck: (shutil.rmtree(ck), os.makedirs(ck),
                              open(os.path.join(ck, "train_state.json"), "w").write("{}"))),
        ckpt_case("manifest_missing", "has its COMPLETE marker but no manifest.json",
                  remove("manifest.json")),
        tool_case("inspect_manifest_missing", "has its COMPLETE marker but no manifest.json",
                  remove("manifest.json"), ["checkpoint", "inspect", "{d}/ck"]),
        ckpt_case("manifest_empty", "manifest.json", write("manifest.json", "")),
        ckpt_case("manifest_not_json", "manifest.json", write("manifest.json", "step: 1")),
        ckpt_case("manifest_binary", "manifest.json", write("manifest.json", b"\x00\xff\x1b[2J")),
        ckpt_case("manifest_array", "must be an object", write("manifest.json", "[1]")),
        ckpt_case("manifest_deep", "nested deeper than 64 levels",
                  write("manifest.json", "[" * 70000 + "]" * 70000)),
        ckpt_case("manifest_duplicate_key", "appears more than once",
                  write("manifest.json", '{"format": "a", "format": "b"}')),
        ckpt_case("format_other", "format is", manifest(["format"], "safetensors")),
        ckpt_case("format_missing", "format is missing", manifest(["format"], DELETE)),
        ckpt_case("version_newer", "is newer than this zerotrain reads", manifest(["version"], 99)),
        ckpt_case("version_zero", "version must be an integer", manifest(["version"], 0)),
        ckpt_case("step_negative", "step must be an integer", manifest(["step"], -1)),
        ckpt_case("step_string", "step must be an integer", manifest(["step"], "1")),
        ckpt_case("step_2_64", "step must be an integer", manifest(["step"], 2**64 - 1)),
        ckpt_case("step_disagrees", "disagrees with step", manifest(["step"], 0)),
        ckpt_case("optimizer_step_beyond", "is beyond step", manifest(["optimizer_step"], 5)),
        ckpt_case("world_size_zero", "world_size must be an integer", manifest(["world_size"], 0)),
        ckpt_case("stage_7", "stage must be an integer in [0, 3]", manifest(["stage"], 7)),
        ckpt_case("universal_string", "universal must be true or false",
                  manifest(["universal"], "no")),
        ckpt_case("dtype_f64", "dtype must be", manifest(["dtype"], "f64")),
        ckpt_case("dtype_other", "dtype is f32 but the checkpoint was saved with bf16",
                  manifest(["dtype"], "bf16")),
        ckpt_case("precision_other", "precision mode is mixed but the checkpoint was saved with low",
                  manifest(["precision"], "low")),
        ckpt_case("precision_unknown", "precision must be", manifest(["precision"], "fp8")),
        ckpt_case("model_config_edited", "model_config_crc32 ",
                  manifest(["model_config"], "{not json")),
        ckpt_case("model_config_crc_garbage", "model_config_crc32 must be 8 hex digits",
                  manifest(["model_config_crc32"], "xyz")),
        ckpt_case("model_config_garbage", "ck/manifest.json: model_config: not valid JSON",
                  model_config("{not json")),
        tool_case("consolidate_model_config_garbage", "ck/manifest.json: model_config: not valid",
                  model_config("{not json"), ["checkpoint", "consolidate", "{d}/ck", "{d}/hf"]),
        ckpt_case("model_config_other", "its model differs",
                  lambda ck: model_config(json.dumps(dict(
                      json.loads(json.load(open(os.path.join(ck, "manifest.json")))["model_config"]),
                      num_hidden_layers=3)))(ck)),
        ckpt_case("train_state_missing", "train_state is missing", manifest(["train_state"], DELETE)),
        ckpt_case("train_state_array", "train_state must be an object", manifest(["train_state"], [])),
        ckpt_case("train_state_no_data", "train_state.data is missing",
                  manifest(["train_state", "data"], DELETE)),
        ckpt_case("train_state_data_string", "state: expected an object",
                  manifest(["train_state", "data"], "\x1b[2J" + "x" * 100000)),
        ckpt_case("seq_len_other", "seq_len is 16 but the checkpoint was saved with seq_len 8",
                  manifest(["train_state", "config", "seq_len"], 8)),
        ckpt_case("seed_other", "seed is", manifest(["train_state", "config", "seed"], 99)),
        ckpt_case("global_batch_other", "global_batch is 2",
                  manifest(["train_state", "config", "global_batch"], 64)),
        ckpt_case("global_batch_missing", "global_batch is 2 but the checkpoint was saved with "
                  "global_batch missing", manifest(["train_state", "config", "global_batch"], DELETE)),
        ckpt_case("files_not_array", "files must be an array", manifest(["files"], {})),
        ckpt_case("file_name_dotdot", "name must be a plain file name",
                  manifest(["files", 0, "name"], "../x.safetensors")),
        ckpt_case("file_name_absolute", "name must be a plain file name",
                  manifest(["files", 0, "name"], "/etc/passwd")),
        ckpt_case("file_missing", "missing (the manifest lists it)", remove(SHARD)),
        ckpt_case("file_bytes_wrong", "the manifest says", manifest(["files", 0, "bytes"], 12)),
        ckpt_case("file_rank_negative", "rank must be an integer", manifest(["files", 0, "rank"], -7)),
        ckpt_case("shard_truncated", "bytes, the manifest says", shard_bytes(lambda raw: raw[:-9])),
        ckpt_case("shard_bit_flip_end", "fails its checksum", flip(3)),
        ckpt_case("shard_bit_flip_middle", "fails its checksum",
                  shard_bytes(lambda raw: raw[:len(raw) // 2] + bytes([raw[len(raw) // 2] ^ 1]) +
                              raw[len(raw) // 2 + 1:])),
        ckpt_case("shard_header_garbage", SHARD,
                  shard_bytes(lambda raw: b"\xff" * 8 + raw[8:])),
        ckpt_case("tensor_crc_bad_hex", "crc32 must be 8 hex digits",
                  manifest(TENSOR0 + ["crc32"], "zzzzzzzz")),
        ckpt_case("tensor_crc_wrong", "fails its checksum", manifest(TENSOR0 + ["crc32"], "00000000")),
        ckpt_case("tensor_end_past_shape", "end must be an integer",
                  manifest(TENSOR0 + ["end"], 10**9)),
        ckpt_case("tensor_begin_after_end", "end must be an integer",
                  lambda ck: (manifest(TENSOR0 + ["begin"], 5)(ck), manifest(TENSOR0 + ["end"], 4)(ck))),
        ckpt_case("tensor_shape_negative", "shape holds", manifest(TENSOR0 + ["shape"], [-4, 2])),
        ckpt_case("tensor_shape_huge", "shape holds", manifest(TENSOR0 + ["shape"], [2**62])),
        ckpt_case("tensor_shape_other", "with shape [2, 512]", manifest(TENSOR0 + ["shape"], [2, 512])),
        ckpt_case("tensor_dtype_other", "stores model.embed_tokens.weight as bf16, this run keeps it as f32", manifest(TENSOR0 + ["dtype"], "bf16")),
        ckpt_case("tensor_renamed", "has no tensor", manifest(TENSOR0 + ["name"], "not.a.tensor")),
        ckpt_case("tensor_removed", "has no tensor",
                  lambda ck: manifest(["files", 0, "tensors"], json.load(
                      open(os.path.join(ck, "manifest.json")))["files"][0]["tensors"][1:])(ck)),
        ckpt_case("latest_points_nowhere", "holds no complete checkpoint",
                  lambda ck: (shutil.rmtree(ck), os.makedirs(os.path.join(ck, "checkpoints")),
                              open(os.path.join(ck, "checkpoints", "latest"), "w").write("step-00000009\n"))),
        ckpt_case("f16_scaler_missing", "has no loss scaler state",
                  manifest(["train_state", "loss_scaler"], None), f16=True),
        ckpt_case("f16_scaler_garbage", "loss_scaler",
                  manifest(["train_state", "loss_scaler"], {"cur_scale": "big"}), f16=True),
        tool_case("inspect_bit_flip", "fails its checksum", flip(3),
                  ["checkpoint", "inspect", "{d}/ck", "--verify"]),
        tool_case("consolidate_truncated", "bytes, the manifest says",
                  shard_bytes(lambda raw: raw[:-1]), ["checkpoint", "consolidate", "{d}/ck", "{d}/hf"]),
        tool_case("universal_no_complete", "is not a complete checkpoint", remove("COMPLETE"),
                  ["checkpoint", "universal", "{d}/ck", "{d}/uni"]),
        # A decision (issue 37): a step-N directory is found by its name, so its manifest's tag
        # must be that name; a copy under another name ("ck") is read by its manifest.
        tool_case("renamed_step_directory", "disagrees with the directory's name step-00000009",
                  lambda ck: shutil.copytree(ck, os.path.join(os.path.dirname(ck), "step-00000009")),
                  ["checkpoint", "inspect", "{d}/step-00000009"]),
        tool_case("consolidate_shard_size_past_64_bits", "--max-shard-size: \"99999999999999999999999GB\"",
                  lambda ck: None, ["checkpoint", "consolidate", "{d}/ck", "{d}/hf",
                                    "--max-shard-size", "99999999999999999999999GB"]),
        tool_case("consolidate_into_non_empty", "hf exists and is not empty", beside("hf/old"),
                  ["checkpoint", "consolidate", "{d}/ck", "{d}/hf"]),
        tool_case("consolidate_into_itself", "ck exists and is not empty", lambda ck: None,
                  ["checkpoint", "consolidate", "{d}/ck", "{d}/ck"]),
        tool_case("consolidate_bad_dtype_in_manifest", "dtype must be", manifest(["dtype"], "int8"),
                  ["checkpoint", "consolidate", "{d}/ck", "{d}/hf"]),
    ]
    return out
