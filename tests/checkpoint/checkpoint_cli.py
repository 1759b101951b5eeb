#!/usr/bin/env python3
"""Sharded checkpoints end to end, through the zerotrain binary on CPU ranks (issue 16).

  reshard  A 2-rank ZeRO-3 run saves; resumes at 4 ranks stage 1, at 1 rank stage 0 (from a
           universal checkpoint) and at 2 ranks stage 3 continue: the same layout bitwise, the
           others within f32 rounding of the uninterrupted run; a 4-rank stage-1 checkpoint
           resumes at 2 ranks stage 3 likewise. The consolidated weights equal <out>/model.
  crash    kill -9 (SIGKILL through the ZT_CHECKPOINT_KILL_AT hook of
           checkpoint/fault_injection.h) at 30 moments of saving, spread over every file
           operation: `latest` always names a complete checkpoint that verifies and resumes to the
           uninterrupted run's losses bitwise; unfinished saves are never picked and are named by
           `checkpoint inspect`.
  refuse   a resume with another model, dtype or global batch, and a corrupt shard: one line each,
           exit 1.

Run: checkpoint_cli.py --zerotrain BIN --work DIR [--only reshard|crash|refuse]
"""
import argparse
import json
import os
import pathlib
import random
import shutil
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
MODEL = ROOT / "assets/models/kjv-llama-4m/config.json"
TOKENIZER = ROOT / "assets/tokenizers/kjv-bpe-4096/tokenizer.json"
TEXT = ROOT / "docs/ARCHITECTURE.md"


class Harness:
    def __init__(self, zerotrain, work):
        self.zt = zerotrain
        self.work = pathlib.Path(work)
        shutil.rmtree(self.work, ignore_errors=True)
        self.work.mkdir(parents=True)
        self.tokens = self.work / "tok.bin"
        self.run_zt(["data", "prepare", "--tokenizer", str(TOKENIZER), "--input", str(TEXT),
                     "--output", str(self.tokens)])
        self.failures = []

    def run_zt(self, args, env=None, check=True):
        e = dict(os.environ, OMP_NUM_THREADS="1")
        e.update(env or {})
        p = subprocess.run([self.zt] + args, capture_output=True, text=True, env=e, timeout=600)
        if check and p.returncode != 0:
            sys.exit(f"[checkpoint_cli] {' '.join(args)} exited {p.returncode}:\n{p.stdout}\n{p.stderr}")
        return p

    def train(self, out, *, steps=8, nproc=1, stage=0, micro_batch=2, grad_accum=1, dtype="f32",
              keep=20, extra=(), env=None, check=True):
        args = ["train", "--model", str(MODEL), "--data", str(self.tokens), "--out", str(out),
                "--device", "cpu", "--steps", str(steps), "--log-every", "1", "--seq-len", "32",
                "--micro-batch", str(micro_batch), "--grad-accum", str(grad_accum),
                "--zero-stage", str(stage), "--dtype", dtype, "--keep-checkpoints", str(keep)]
        if nproc > 1:
            args += ["--nproc", str(nproc)]
        return self.run_zt(args + list(extra), env=env, check=check)

    def fail(self, what):
        print(f"FAIL {what}")
        self.failures.append(what)


def losses(out):
    return {j["step"]: j["loss"] for j in map(json.loads, (out / "metrics.jsonl").read_text().splitlines())}


def compare(h, what, ref, got, rel):
    for step, loss in got.items():
        if rel == 0 and loss != ref[step]:
            return h.fail(f"{what}: step {step} loss {loss!r} != {ref[step]!r} (bitwise)")
        if abs(loss - ref[step]) > rel * abs(ref[step]):
            return h.fail(f"{what}: step {step} loss {loss} vs {ref[step]} beyond {rel:g}")
    print(f"ok   {what}: steps {min(got)}-{max(got)} {'bitwise' if rel == 0 else f'within {rel:g}'}")


def reshard(h):
    w = h.work / "reshard"
    straight = w / "straight"
    h.train(straight, nproc=2, stage=3, extra=["--save-every", "2"])
    ref = losses(straight)
    ckpt4 = straight / "checkpoints" / "step-00000004"
    # f32: a different split of the same global batch reduces in another order; one rounding.
    tol = 2e-6
    h.train(w / "same", nproc=2, stage=3, extra=["--resume", str(ckpt4)])
    compare(h, "2 ranks stage 3 -> 2 ranks stage 3", ref, losses(w / "same"), 0)
    h.train(w / "to4", nproc=4, stage=1, micro_batch=1, extra=["--resume", str(ckpt4), "--save-every", "2"])
    compare(h, "2 ranks stage 3 -> 4 ranks stage 1", ref, losses(w / "to4"), tol)
    h.run_zt(["checkpoint", "universal", str(ckpt4), str(w / "universal")])
    h.train(w / "to1", nproc=1, stage=0, grad_accum=2, extra=["--resume", str(w / "universal")])
    compare(h, "2 ranks stage 3 -> universal -> 1 rank stage 0", ref, losses(w / "to1"), tol)
    h.train(w / "back2", nproc=2, stage=3, extra=["--resume", str(w / "to4" / "checkpoints" / "step-00000006")])
    compare(h, "4 ranks stage 1 -> 2 ranks stage 3", ref, losses(w / "back2"), 2 * tol)
    h.run_zt(["checkpoint", "consolidate", str(straight), str(w / "hf")])
    for name in ("model.safetensors", "config.json"):
        if (w / "hf" / name).read_bytes() != (straight / "model" / name).read_bytes():
            h.fail(f"consolidated {name} differs from <out>/model/{name}")
    print("ok   consolidate equals <out>/model bitwise")


def crash(h, moments):
    w = h.work / "crash"
    straight = w / "straight"
    save = ["--save-every", "1", "--sync-save"]
    h.train(straight, steps=4, keep=2, extra=save)
    ref = losses(straight)
    log = w / "faults.log"
    # The operations of a run killed at its 3rd save and resumed into the same --out (which
    # replaces the checkpoints it had completed beyond `latest`).
    h.train(w / "count", steps=4, keep=2, extra=save, env={"ZT_CHECKPOINT_FAULT_LOG": str(log)})
    ops = log.read_text().splitlines()
    kinds = sorted({line.split(" ", 1)[1] for line in ops})
    rng = random.Random(16)
    # Every kind of operation at least once, the rest at random moments.
    picks = sorted({next(int(l.split()[0]) for l in ops if l.split(" ", 1)[1] == k) for k in kinds} |
                   set(rng.sample(range(1, len(ops) + 1), min(len(ops), moments))))[:max(moments, len(kinds))]
    for k in picks:
        out = w / f"kill{k}"
        p = h.train(out, steps=4, keep=2, extra=save, env={"ZT_CHECKPOINT_KILL_AT": str(k)},
                    check=False)
        if p.returncode == 0:
            h.fail(f"kill at operation {k}: the run was not killed")
            continue
        root = out / "checkpoints"
        complete = [d for d in root.glob("step-*") if "." not in d.name and (d / "COMPLETE").exists()]
        resume = []
        if (root / "latest").exists() or complete:
            v = h.run_zt(["checkpoint", "inspect", str(out), "--verify"], check=False)
            if v.returncode != 0:
                h.fail(f"kill at operation {k}: latest does not verify:\n{v.stdout}{v.stderr}")
                continue
            if "unfinished save" not in v.stdout and any("." in d.name for d in root.glob("step-*")):
                h.fail(f"kill at operation {k}: inspect does not name the unfinished save")
            resume = ["--resume", str(out)]
        # Run the job again into the same --out: from its latest checkpoint, or from the start.
        r = h.train(out, steps=4, keep=2, extra=save + resume, check=False)
        if r.returncode != 0:
            if "already at step 4" in r.stderr:
                continue
            h.fail(f"kill at operation {k}: the second run failed: {r.stderr.strip()}")
            continue
        got = losses(out)
        if got != ref:
            h.fail(f"kill at operation {k}: losses {got} differ from {ref}")
        left = [d.name for d in root.iterdir() if "." in d.name]
        if left:
            h.fail(f"kill at operation {k}: unfinished saves left after the second run: {left}")
    print(f"ok   crash: {len(picks)} kills over {len(ops)} file operations of {len(kinds)} kinds "
          f"({', '.join(kinds)}): latest always complete, verified and resumed bitwise")


def refuse(h):
    w = h.work / "refuse"
    run = w / "run"
    h.train(run, steps=2)
    # Another architecture whose tensor shapes happen to match: twice the heads, half the size.
    cfg = json.loads(MODEL.read_text())
    cfg["num_attention_heads"] *= 2
    cfg["num_key_value_heads"] = cfg.get("num_key_value_heads", cfg["num_attention_heads"] // 2) * 2
    cfg["head_dim"] = cfg["hidden_size"] // cfg["num_attention_heads"]
    other = w / "other.json"
    other.write_text(json.dumps(cfg))
    cases = [
        ("dtype", ["--dtype", "bf16"], "dtype is bf16 but the checkpoint was saved with f32"),
        ("global batch", ["--micro-batch", "4"],
         "global_batch is 4 but the checkpoint was saved with global_batch 2"),
        ("model", ["--model", str(other)], "its model differs (num_heads"),
    ]
    for what, flags, expect in cases:
        args = ["train", "--model", str(MODEL), "--data", str(h.tokens), "--out", str(w / "r"),
                "--device", "cpu", "--steps", "4", "--seq-len", "32", "--resume", str(run)]
        for flag, value in zip(flags[::2], flags[1::2]):
            if flag in args:
                args[args.index(flag) + 1] = value
            else:
                args += [flag, value]
        p = h.run_zt(args, check=False)
        line = p.stderr.strip()
        if p.returncode == 0 or expect not in line or "\n" in line:
            h.fail(f"refuse {what}: rc {p.returncode}, stderr {line!r}")
        else:
            print(f"ok   refuse {what}: {line}")
    shard = next((run / "checkpoints").glob("step-*/rank-00000-of-00001.safetensors"))
    data = bytearray(shard.read_bytes())
    data[-5] ^= 0x10
    shard.write_bytes(bytes(data))
    p = h.run_zt(["checkpoint", "inspect", str(run), "--verify"], check=False)
    if p.returncode != 1 or "fails its checksum" not in p.stderr or str(shard) not in p.stderr:
        h.fail(f"corrupt shard: rc {p.returncode}, stderr {p.stderr.strip()!r}")
    else:
        print(f"ok   corrupt shard named: {p.stderr.strip().splitlines()[0]}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--zerotrain", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--only", choices=["reshard", "crash", "refuse"])
    ap.add_argument("--moments", type=int, default=30)
    a = ap.parse_args()
    h = Harness(a.zerotrain, a.work)
    if a.only in (None, "refuse"):
        refuse(h)
    if a.only in (None, "reshard"):
        reshard(h)
    if a.only in (None, "crash"):
        crash(h, a.moments)
    if h.failures:
        sys.exit(f"[checkpoint_cli] {len(h.failures)} failure(s)")
    print("[checkpoint_cli] all passed")


if __name__ == "__main__":
    main()
