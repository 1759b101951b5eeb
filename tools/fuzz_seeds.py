#!/usr/bin/env python3
"""Writes the seed corpora of the libFuzzer targets (fuzz/) from the repository's fixtures: one
directory per target under OUT (default build-fuzz/seeds). Large fixtures are cut down (a tokenizer
to its first few hundred tokens and the merges among them) so that each execution stays fast.

  tools/fuzz_seeds.py [--out build-fuzz/seeds]

Used by tools/fuzz_all.sh; see docs/fuzzing.md.
"""
import argparse
import glob
import json
import os
import shutil
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "bad_inputs"))

import fixtures  # noqa: E402


def small_tokenizer(path, keep=300):
    """The tokenizer with its first `keep` vocabulary entries and the merges among them."""
    with open(path) as f:
        t = json.load(f)
    vocab = dict(list(t["model"]["vocab"].items())[:keep])
    merges = []
    for m in t["model"]["merges"]:
        left, right = m.split(" ", 1) if isinstance(m, str) else m
        if left in vocab and right in vocab and left + right in vocab:
            merges.append(m)
    t["model"]["vocab"] = vocab
    t["model"]["merges"] = merges
    t["added_tokens"] = [a for a in t.get("added_tokens", []) if a["id"] < keep]
    return json.dumps(t)


# A sharded checkpoint's manifest (checkpoint/manifest.h) of one rank and one parameter.
MANIFEST = {
    "format": "zerotrain-sharded-checkpoint", "version": 1, "tag": "step-00000002", "step": 2,
    "optimizer_step": 2, "world_size": 2, "stage": 3, "universal": False, "dtype": "bf16",
    "precision": "mixed", "model_config": "{}",
    "train_state": {"step": 2, "data": {"epoch": 0, "next_index": 8}, "config": {},
                    "scheduler": None, "loss_scaler": None},
    "files": [{"name": "rank-00000-of-00002.safetensors", "rank": 0, "bytes": 96, "tensors": [
        {"name": "w", "shape": [4, 4], "begin": 0, "end": 8, "dtype": "bf16", "crc32": "0a1b2c3d"},
        {"name": "w.master", "shape": [4, 4], "begin": 0, "end": 8, "dtype": "f32",
         "crc32": "00000000"}]}],
}


def seeds():
    """{target: [(file name, bytes)]}."""
    def files(pattern, exclude=None):
        out = []
        for p in sorted(glob.glob(os.path.join(ROOT, pattern))):
            if exclude and exclude in p:
                continue
            with open(p, "rb") as f:
                out.append((os.path.basename(p), f.read()))
        return out

    header, data = fixtures.st_tensors(fixtures.tiny_tensors(), {"format": "pt"})
    texts = files("tests/fixtures/tokenizer/small_bpe/cases.json")[0][1]
    encode = [(f"text{k}.txt", s.encode()) for k, s in enumerate(
        c["text"] for c in json.loads(texts)["cases"][:60] if c.get("text"))]
    return {
        "ds_config": files("tests/fixtures/ds_configs/*/*.json", exclude=".expect."),
        "safetensors": files("tests/fixtures/safetensors/*.safetensors") +
        files("tests/fixtures/safetensors/sharded/*.safetensors") +
        [("tiny.safetensors", fixtures.st_file(header, data))],
        "sharded_index": files("tests/fixtures/safetensors/sharded/*.json") + [
            ("two_shards.json", json.dumps({"metadata": {"total_size": 32}, "weight_map": {
                "a.weight": "model-00001-of-00002.safetensors",
                "b.weight": "model-00002-of-00002.safetensors"}}).encode())],
        "hf_config": files("tests/fixtures/configs/*.json") +
        files("tests/fixtures/estimate/*.json") +
        files("assets/models/*/config.json") + files("tests/fixtures/hostile/layers_1e9.json") +
        [("tiny.json", fixtures.dumps(fixtures.TINY_CONFIG).encode())],
        "tokenizer": [("byte_level.json", small_tokenizer(os.path.join(
            ROOT, "tests/fixtures/tokenizer/small_bpe/tokenizer.json")).encode()),
                      ("sentencepiece.json", small_tokenizer(os.path.join(
                          ROOT, "tests/fixtures/tokenizer/sp_bpe/tokenizer.json")).encode())],
        "tokenizer_encode": encode or [("hello.txt", b"Hello world")],
        "token_file": [("tiny.bin", fixtures.token_file()),
                       ("eos.bin", fixtures.token_file([1, 2, 0, 3, 0], eos_id=0, num_documents=2)),
                       ("wide.bin", fixtures.token_file([70000, 5, 1], token_bytes=4,
                                                        vocab_size=70001))],
        "chat_template": files("tests/fixtures/chat_templates/*.jinja"),
        "accelerate_config": files("tests/fixtures/seed_accelerate/*.yaml"),
        "manifest": [("manifest.json", json.dumps(MANIFEST, indent=1).encode()),
                     ("universal.json", json.dumps(dict(MANIFEST, universal=True, files=[
                         dict(MANIFEST["files"][0], name="w.safetensors", rank=-1)])).encode())],
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=os.path.join(ROOT, "build-fuzz", "seeds"))
    args = ap.parse_args()
    for target, items in seeds().items():
        d = os.path.join(args.out, target)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        for name, data in items:
            with open(os.path.join(d, name), "wb") as f:
                f.write(data)
        print(f"{target}: {len(items)} seeds")


if __name__ == "__main__":
    main()
