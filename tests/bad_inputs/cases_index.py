"""Bad sharded checkpoints (model.safetensors.index.json + shards), loaded by `zerotrain train`:
the index's JSON, its weight_map (file names that leave the directory, files that do not exist or
do not hold the tensor), its metadata, and broken shards."""
import json
import os

from case import Case
from fixtures import TINY_CONFIG, TRAIN_FLAGS, dumps, st_file, st_tensors, tiny_tensors

INDEX = "model.safetensors.index.json"
SHARD1 = "model-00001-of-00002.safetensors"
SHARD2 = "model-00002-of-00002.safetensors"
EMBED = "model.embed_tokens.weight"


def shards():
    """The tiny model split in two: the embedding alone in shard 2."""
    tensors = tiny_tensors()
    first = [t for t in tensors if t[0] != EMBED]
    second = [t for t in tensors if t[0] == EMBED]
    return first, second


def index_of(first, second, **metadata):
    weight_map = {t[0]: SHARD1 for t in first}
    weight_map.update({t[0]: SHARD2 for t in second})
    return {"metadata": metadata or {"total_size": 13568}, "weight_map": weight_map}


def index_case(name, expect, index=None, index_text=None, shard1=None, shard2=None, setup=None):
    first, second = shards()
    files = {"m/config.json": dumps(TINY_CONFIG),
             "m/" + INDEX: index_text if index_text is not None else json.dumps(
                 index if index is not None else index_of(first, second))}
    if shard1 is not False:
        files["m/" + SHARD1] = shard1 if shard1 is not None else st_file(*st_tensors(first))
    if shard2 is not False:
        files["m/" + SHARD2] = shard2 if shard2 is not None else st_file(*st_tensors(second))
    return Case(name=f"index_{name}", family="index",
                argv=["train", "--model", "{d}/m", "--data", "{tokens}", "--out", "{d}/out"] +
                TRAIN_FLAGS, files=files, expect=expect, setup=setup)


def mapped(name_to_file):
    first, second = shards()
    idx = index_of(first, second)
    idx["weight_map"].update(name_to_file)
    return idx


def cases():
    first, second = shards()
    good = index_of(first, second)
    out = [
        index_case("empty", "not valid JSON", index_text=""),
        index_case("not_json", "not valid JSON", index_text="weight_map: all"),
        index_case("array", "expected a JSON object", index_text="[]"),
        index_case("string", "expected a JSON object", index_text='"model.safetensors"'),
        index_case("deep", "nested deeper than 64 levels", index_text="[" * 100000),
        index_case("duplicate_key", "appears more than once",
                   index_text=json.dumps(good)[:-1] + ', "weight_map": {}}'),
        index_case("invalid_utf8", "not valid JSON", index_text=b'{"weight_map": {"\xc3\x28": 1}}'),
        index_case("no_weight_map", 'missing "weight_map"', index={"metadata": {}}),
        index_case("weight_map_array", "weight_map: expected an object",
                   index={"weight_map": [SHARD1]}),
        index_case("weight_map_string", "weight_map: expected an object",
                   index={"weight_map": SHARD1}),
        index_case("weight_map_null", "weight_map: expected an object", index={"weight_map": None}),
        index_case("weight_map_empty", "the checkpoint lacks 11 tensor(s)",
                   index={"weight_map": {}}),
        # Found by fuzzing (fuzz_sharded_index): a name past NAME_MAX threw from the file system.
        index_case("file_name_too_long", "is not a file name in the directory",
                   index=mapped({EMBED: "model-" + "T" * 300 + ".safetensors"})),
        index_case("file_name_nul", "is not a file name in the directory",
                   index=mapped({EMBED: "model\u0000.safetensors"})),
        index_case("file_number", "expected a file name", index=mapped({EMBED: 2})),
        index_case("file_null", "expected a file name", index=mapped({EMBED: None})),
        index_case("file_object", "expected a file name", index=mapped({EMBED: {"f": SHARD2}})),
        index_case("metadata_array", "metadata: expected an object",
                   index=dict(good, metadata=[])),
        index_case("total_size_negative", "metadata.total_size: expected a non-negative integer",
                   index=dict(good, metadata={"total_size": -1})),
        index_case("total_size_string", "metadata.total_size: expected a non-negative integer",
                   index=dict(good, metadata={"total_size": "13568"})),
        index_case("total_size_float", "metadata.total_size: expected a non-negative integer",
                   index=dict(good, metadata={"total_size": 1.5})),
        index_case("shard_missing", f'is mapped to "{SHARD2}", which does not exist', shard2=False),
        index_case("all_shards_missing", "which does not exist", shard1=False, shard2=False),
        index_case("mapped_to_other_shard", f'is mapped to "{SHARD1}", which does not hold it',
                   index=mapped({EMBED: SHARD1})),
        index_case("mapped_to_unknown_file", 'is mapped to "model-00003-of-00003.safetensors"',
                   index=mapped({EMBED: "model-00003-of-00003.safetensors"})),
        index_case("tensor_not_in_map", "the checkpoint lacks 1 tensor(s) the model needs: " + EMBED,
                   index={"weight_map": {t[0]: SHARD1 for t in first}}),
        index_case("shard_truncated", "truncated file?",
                   shard2=st_file(*st_tensors(second))[:-100]),
        index_case("shard_not_safetensors", "not valid JSON", shard2=b"\x20\0\0\0\0\0\0\0" + b"x" * 32),
        index_case("shard_empty", "too few for the 8-byte header length", shard2=b""),
        index_case("shard_wrong_shape", f"{EMBED}: the checkpoint has",
                   shard2=st_file(*st_tensors([(EMBED, "F32", [16, 64], second[0][3])]))),
        index_case("shard_is_directory", "which does not exist", shard2=False,
                   setup=lambda d, fx: os.makedirs(os.path.join(d, "m", SHARD2))),
        index_case("shard_dangling_symlink", "which does not exist", shard2=False,
                   setup=lambda d, fx: os.symlink("gone.safetensors", os.path.join(d, "m", SHARD2))),
    ]
    for label, fname in [("parent", "../" + SHARD2), ("absolute", "/etc/passwd"),
                         ("subdir", "sub/" + SHARD2), ("dot", "."), ("dotdot", ".."), ("empty", ""),
                         ("backslash", "..\\" + SHARD2)]:
        out.append(index_case(f"file_name_{label}", "is not a file name in the directory",
                              index=mapped({EMBED: fname})))
    out.append(index_case("file_name_control", r'"a\u0001\u001b[2J.safetensors", which does not exist',
                          index=mapped({EMBED: "a\x01\x1b[2J.safetensors"})))
    return out
