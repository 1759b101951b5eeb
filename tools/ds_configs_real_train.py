#!/usr/bin/env python3
"""`zerotrain train` over the public corpus of real DeepSpeed configs (issue 18, "Deliver" 3).

For every file ../shared/ds-configs-real/EXPECT.tsv marks "accept", runs two steps of a tiny model
on CPU ranks (`zerotrain train --nproc W --device cpu`), as a Hugging Face Trainer user runs the
file: flags only where it says "auto" (--micro-batch, --grad-accum, --dtype), W the world size
that its own batch numbers imply (4, else 1, 2 or 8), exactly as tests/config/real_corpus.cpp
picks them for the config check (a file whose batch implies more than 1024 sequences per rank and
step runs with 16 accumulation steps, saying so). Each run either trains or is refused in one
line; the refusals that name a setting train cannot run yet ("[config] KEY: not supported yet by zerotrain train")
are counted per feature, and the list of features still missing is printed last. It shrinks as
features land.

  tools/ds_configs_real_train.py --zerotrain build-cpu/bin/zerotrain [--only SUBSTRING]
      [--model config.json] [--timeout 120] [--json out.json]

Exit status: 0 when every file trains, is refused naming a feature, is one zerotrain refuses on
purpose (DELIBERATE, as the config-check conformance test lists them), or names an nvme_path
directory this machine lacks; 1 when a run fails any other way (a crash, a timeout, an error
that names no missing feature). About 3.5 minutes for the corpus on 2 cores (one OpenMP thread
per rank, a model of hidden size 32).
"""
import argparse
import atexit
import collections
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ERROR = re.compile(r"^(\[rank \d+\] )?(?=\[[a-z_]+\] )")
NOT_YET = re.compile(r"\[config\] (\S+): not supported yet by zerotrain train \((.*)\)")
# Files zerotrain refuses on purpose although EXPECT.tsv accepts them, with the key the refusal
# names (the same list as tests/config/test_ds_config_real.cpp, where each has its reason).
# Past this many sequences per rank and step, a file runs with at most MAX_ACCUM accumulation steps
# (scaled_batch; said in its line).
MAX_SEQUENCES = 1024
MAX_ACCUM = 16
DELIBERATE = {
    "Megatron-DeepSpeed__examples_deepspeed_curriculum_learning_ds_zero_stage_1_config_baseline."
    "json": "optimizer.params.max_grad_norm",
}


def read_expect(corpus):
    rows = []
    with open(os.path.join(corpus, "EXPECT.tsv")) as f:
        for line in f:
            cells = line.rstrip("\n").split("\t")
            if len(cells) >= 2:
                rows.append((cells[0], cells[1]))
    return rows


def positive(j, key):
    v = j.get(key)
    if isinstance(v, bool) or not isinstance(v, (int, float)) or v < 1:
        return None
    return int(v)


def has_auto(j, path):
    node = j
    for part in path.split("."):
        if not isinstance(node, dict) or part not in node:
            return False
        node = node[part]
    return node == "auto"


def trainer_batch(j):
    """The world size, micro batch and accumulation a Trainer user runs the file with
    (real_corpus.cpp's trainer_overrides)."""
    train, micro, accum = (positive(j, k) for k in
                           ("train_batch_size", "train_micro_batch_size_per_gpu",
                            "gradient_accumulation_steps"))
    world = 4
    if train and micro and accum:
        if train % (micro * accum) == 0:
            world = train // (micro * accum)
    elif train:
        per_rank = micro or accum or 1
        world = next((w for w in (4, 1, 2, 8) if train % (per_rank * w) == 0), 4)
    grad_accum = accum or (train // (world * micro) if train and micro else 1)
    micro_batch = micro or (train // (world * grad_accum) if train else 2)
    return world, micro_batch, grad_accum


def scaled_batch(j, world, micro_batch, grad_accum):
    """The file with at most MAX_ACCUM accumulation steps, when its batch implies more than
    MAX_SEQUENCES sequences per rank and step (else None): two such steps of a tiny model take
    longer than the run's timeout on CPU ranks, and the batch rule is config check's to test."""
    if micro_batch * grad_accum <= MAX_SEQUENCES or grad_accum <= MAX_ACCUM:
        return None
    out = dict(j)
    if isinstance(j.get("gradient_accumulation_steps"), int):
        out["gradient_accumulation_steps"] = MAX_ACCUM
    if isinstance(j.get("train_batch_size"), int):
        out["train_batch_size"] = world * micro_batch * MAX_ACCUM
    return out


def flags_for(j, micro_batch, grad_accum):
    """The flags a Trainer user gives: values only where the file says "auto"."""
    flags = []
    no_batch_key = "train_batch_size" not in j and "train_micro_batch_size_per_gpu" not in j
    if has_auto(j, "train_micro_batch_size_per_gpu") or no_batch_key:
        flags += ["--micro-batch", str(micro_batch)]
    if has_auto(j, "gradient_accumulation_steps"):
        flags += ["--grad-accum", str(grad_accum)]
    if any(has_auto(j, k) for k in ("fp16.enabled", "bf16.enabled", "bfloat16.enabled")):
        fp16 = isinstance(j.get("fp16"), dict) and j["fp16"].get("enabled") is True
        flags += ["--dtype", "fp16" if fp16 else "bf16"]
    return flags


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--zerotrain", required=True)
    ap.add_argument("--corpus", default=os.path.join(os.path.dirname(ROOT), "shared",
                                                     "ds-configs-real"))
    ap.add_argument("--model", help="a config.json (default: kjv-llama-4m shrunk to hidden 32, "
                    "2 layers)")
    ap.add_argument("--tokenizer",
                    default=os.path.join(ROOT, "assets/tokenizers/kjv-bpe-4096/tokenizer.json"))
    ap.add_argument("--only", default="", help="only files whose name contains this")
    ap.add_argument("--timeout", type=int, default=120, help="seconds per run")
    ap.add_argument("--json", help="also write the results here")
    a = ap.parse_args()
    if not os.path.exists(os.path.join(a.corpus, "EXPECT.tsv")):
        print(f"skipped: no corpus at {a.corpus}")
        return 0
    zt = os.path.abspath(a.zerotrain)
    work = tempfile.mkdtemp(prefix="zt-ds-real-")
    atexit.register(shutil.rmtree, work, True)  # the runs' outputs: ~400 MB for the corpus
    tokens = os.path.join(work, "tokens.bin")
    model = a.model
    if not model:
        with open(os.path.join(ROOT, "assets/models/kjv-llama-4m/config.json")) as f:
            c = json.load(f)
        c.update(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2,
                 num_key_value_heads=1)
        model = os.path.join(work, "tiny.json")
        with open(model, "w") as f:
            json.dump(c, f)
    # One thread per rank: up to 8 ranks share the machine's cores.
    env = dict(os.environ, OMP_NUM_THREADS="1")
    # Enough tokens for the largest batch of the corpus (micro 100 x 4 ranks of 33 tokens).
    text = os.path.join(work, "text.txt")
    with open(os.path.join(ROOT, "docs/ARCHITECTURE.md")) as f, open(text, "w") as out:
        out.write(f.read() * 8)
    subprocess.run([zt, "data", "prepare", "--tokenizer", a.tokenizer, "--input", text,
                    "--output", tokens], check=True, stdout=subprocess.DEVNULL)
    results, missing, other = [], collections.Counter(), []
    for name, verdict in read_expect(a.corpus):
        if verdict != "accept" or a.only not in name:
            continue
        path = os.path.join(a.corpus, name)
        with open(path) as f:
            j = json.load(f)
        world, micro_batch, grad_accum = trainer_batch(j)
        flags = flags_for(j, micro_batch, grad_accum)
        note = ""
        scaled = scaled_batch(j, world, micro_batch, grad_accum)
        if scaled is not None:
            flags = flags_for(scaled, micro_batch, MAX_ACCUM)
            path = os.path.join(work, "scaled-" + name)
            with open(path, "w") as f:
                json.dump(scaled, f)
            note = f"[batch scaled from {grad_accum} to {MAX_ACCUM} accumulation steps] "
        cmd = [zt, "train", "--model", model, "--data", tokens, "--out",
               os.path.join(work, name), "--device", "cpu", "--steps", "2", "--seq-len", "32",
               "--nproc", str(world), "--deepspeed", path] + flags
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=a.timeout, cwd=work,
                               env=env)
            out, rc = p.stdout + p.stderr, p.returncode
        except subprocess.TimeoutExpired:
            out, rc = f"timed out after {a.timeout} s", -1
        # The last "[component] ..." line of the ranks says why (warnings come before it,
        # launch's own lines after).
        errors = [ERROR.sub("", l) for l in out.splitlines()
                  if ERROR.match(l) and not l.startswith("[launch]")]
        m = next((NOT_YET.search(l) for l in out.splitlines() if NOT_YET.search(l)), None)
        if rc == 0:
            status, detail = "trained", ""
        elif m:
            status, detail = "missing", f"{m.group(1)} ({m.group(2)})"
            missing[detail] += 1
        elif name in DELIBERATE and any(DELIBERATE[name] in l for l in errors):
            status, detail = "refused", errors[-1]
        elif any("nvme_path" in l and "does not exist" in l for l in errors):
            # The file names a directory of its author's machine (/local_nvme/...).
            status, detail = "no-dir", errors[-1]
        else:
            status = "failed"
            detail = (errors or out.strip().splitlines() or ["(no output)"])[-1]
            other.append(name)
        results.append({"file": name, "world": world, "flags": flags, "status": status,
                        "detail": note + detail})
        print(f"{status:8} {name}  (--nproc {world} {' '.join(flags)}) {note}{detail}", flush=True)
    counts = collections.Counter(r["status"] for r in results)
    print(f"\n{len(results)} accepted files: {counts['trained']} trained 2 steps, "
          f"{counts['missing']} refused naming a missing feature, {counts['refused']} refused on "
          f"purpose, {counts['no-dir']} need their nvme_path directory, {counts['failed']} failed "
          f"otherwise")
    print("features still missing in zerotrain train (files asking for each):")
    for feature, n in missing.most_common():
        print(f"  {n:4}  {feature}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"results": results, "missing": dict(missing)}, f, indent=1)
    return 1 if other else 0


if __name__ == "__main__":
    sys.exit(main())
