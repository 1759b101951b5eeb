#!/usr/bin/env python3
"""Writes the safetensors files that tests/io/test_safetensors_reference.cpp and
tests/io/test_sharded_safetensors.cpp compare zerotrain's reader and writer against, byte for byte.

Every file comes from the reference `safetensors` package (safetensors.numpy.save_file); the
sharded checkpoint is split by huggingface_hub's split_state_dict_into_shards_factory and its index
is written as transformers' save_pretrained writes it (json.dumps(index, indent=2, sort_keys=True)
plus a newline, metadata {"total_parameters", "total_size"}), which needs no torch. The tensor
values are the closed-form sequences the C++ tests rebuild (see tests/io/safetensors_fixtures.h).

Needs: pip install safetensors numpy ml_dtypes huggingface_hub
Run:   python3 tools/gen_safetensors_fixtures.py [--out tests/fixtures/safetensors]
"""
import argparse
import json
import os

import ml_dtypes
import numpy as np
from huggingface_hub.serialization import split_state_dict_into_shards_factory
from safetensors.numpy import save_file


def seq(n, scale, shift):
    """(i + shift) * scale for i in [0, n): exact in f16, bf16 and f32 for the values used."""
    return (np.arange(n, dtype=np.float64) + shift) * scale


def mixed_tensors():
    return {
        "f32.matrix": seq(15, 0.375, -7).astype(np.float32).reshape(3, 5),
        "f32.scalar": np.array(2.5, dtype=np.float32),
        "f32.empty": np.zeros((0, 4), dtype=np.float32),
        "a.first": np.array([-0.5], dtype=np.float32),
        "f16.odd": seq(7, 0.5, -2.5).astype(np.float16),
        "bf16.cube": seq(24, 0.125, -11).astype(ml_dtypes.bfloat16).reshape(2, 3, 4),
        "bf16.row": seq(6, 4.0, -3).astype(ml_dtypes.bfloat16).reshape(1, 6),
        "i32.vec": (np.arange(5, dtype=np.int64) * 1000 - 2000).astype(np.int32),
        "i64.big": np.array([[-(2**40), 1], [2**53 + 1, -7]], dtype=np.int64),
        "u8.bytes": ((np.arange(9) * 29) % 256).astype(np.uint8),
    }


def unsupported_tensors():
    return {
        "f32": np.array([1.5, -2.0], dtype=np.float32),
        "f64": np.array([0.1, 0.2], dtype=np.float64),
        "i8": np.array([-1, 2, -3], dtype=np.int8),
        "i16": np.array([300, -300], dtype=np.int16),
        "bool": np.array([True, False]),
    }


def sharded_tensors():
    """Sizes 40, 16, 100, 24 and 8 bytes: with a 64-byte limit the third gets a shard of its own
    ahead of the first two (huggingface_hub's order), the last two share the third shard."""
    return {
        "model.embed.weight": seq(10, 0.25, -5).astype(np.float32),
        "model.norm.weight": seq(4, 1.0, 1).astype(np.float32),
        "model.big.weight": seq(25, 0.5, -12).astype(np.float32).reshape(5, 5),
        "model.layers.0.w": seq(12, 2.0, -6).astype(ml_dtypes.bfloat16).reshape(3, 4),
        "lm_head.weight": seq(4, -1.0, 0).astype(ml_dtypes.bfloat16),
    }


SHARD_LIMIT = 64


def write_sharded(out_dir, tensors):
    os.makedirs(out_dir, exist_ok=True)
    split = split_state_dict_into_shards_factory(
        tensors,
        get_storage_size=lambda t: t.nbytes,
        filename_pattern="model{suffix}.safetensors",
        max_shard_size=SHARD_LIMIT,
    )
    for filename, names in split.filename_to_tensors.items():
        save_file({n: tensors[n] for n in names}, os.path.join(out_dir, filename),
                  metadata={"format": "pt"})
    total_parameters = sum(int(t.size) for t in tensors.values())
    index = {
        "metadata": {"total_parameters": total_parameters, **split.metadata},
        "weight_map": split.tensor_to_filename,
    }
    with open(os.path.join(out_dir, "model.safetensors.index.json"), "w") as f:
        f.write(json.dumps(index, indent=2, sort_keys=True) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="tests/fixtures/safetensors")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    save_file(mixed_tensors(), os.path.join(args.out, "mixed.safetensors"),
              metadata={"format": "pt"})
    save_file(unsupported_tensors(), os.path.join(args.out, "unsupported_dtypes.safetensors"))
    save_file({"attn.0": seq(6, 1.0, 0).astype(np.float32).reshape(1, 2, 3)},
              os.path.join(args.out, "no_metadata.safetensors"))
    save_file({}, os.path.join(args.out, "empty.safetensors"))
    write_sharded(os.path.join(args.out, "sharded"), sharded_tensors())


if __name__ == "__main__":
    main()
