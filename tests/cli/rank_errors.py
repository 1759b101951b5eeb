#!/usr/bin/env python3
"""One line per error across 4 CPU ranks (issue 37; [Note: one line per error across ranks] in
src/zerotrain/comm/agreed_checks.h). Each case runs a refused training and counts the lines on
stderr:

  a refusal every rank reaches (a bad ds_config, a token file that is not one, a resume at
  another world size), through `zerotrain launch -n 4`, `zerotrain launch -n 4 --mpi`,
  `zerotrain train --nproc 4` and `mpirun -q -n 4`: the error once, plus the launcher's own line
  under `zerotrain launch`, and no OpenMPI banner;
  an error only ranks 2 and 3 meet (mpirun's MPMD form gives them another ds_config): each of
  them prints it, with its rank.

Raw `mpirun` without -q prints OpenMPI's own banner after any non-zero exit; that is mpirun's
output, not the ranks' (docs/LAUNCH.md). Run: rank_errors.py --zerotrain BIN --root REPO --work DIR
"""
import argparse
import os
import pathlib
import shutil
import subprocess
import sys


class Harness:
    def __init__(self, zt, root, work):
        self.zt, self.root, self.work = str(zt), root, work
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True)
        self.env = dict(os.environ, OMP_NUM_THREADS="1")
        for k in ("ZEROTRAIN_RANK_PREFIXED", "ZEROTRAIN_ACCELERATE_CONFIG"):
            self.env.pop(k, None)
        self.tokens = work / "tok.bin"
        self.run_ok([self.zt, "data", "prepare", "--tokenizer",
                     str(root / "assets/tokenizers/kjv-bpe-4096/tokenizer.json"), "--input",
                     str(root / "docs/ARCHITECTURE.md"), "--output", str(self.tokens)])
        self.bad_ds = work / "bad.json"
        self.bad_ds.write_text('{"train_micro_batch_size_per_gpu": 2, '
                               '"zero_optimization": {"stage": 7}}')
        self.not_tokens = work / "not_tokens.bin"
        self.not_tokens.write_text("x\n")
        self.mpirun = ["mpirun", "-q", "--oversubscribe", "--bind-to", "none"]
        if os.geteuid() == 0:
            self.mpirun.append("--allow-run-as-root")
        self.failures = []

    def run_ok(self, argv):
        p = subprocess.run(argv, capture_output=True, text=True, env=self.env, timeout=300)
        if p.returncode != 0:
            sys.exit(f"[rank_errors] {' '.join(argv)} exited {p.returncode}:\n{p.stderr[-3000:]}")

    def train(self, out, data=None, extra=(), steps=2):
        return [self.zt, "train", "--model",
                str(self.root / "assets/models/kjv-llama-4m/config.json"), "--data",
                str(data or self.tokens), "--out", str(out), "--device", "cpu", "--steps", str(steps),
                "--seq-len", "32", "--micro-batch", "2"] + list(extra)

    def expect(self, name, argv, want):
        """`want`: one entry per stderr line, each a substring its line must hold, in order."""
        p = subprocess.run(argv, capture_output=True, text=True, env=self.env, timeout=300)
        lines = [l for l in p.stderr.splitlines() if l.strip()]
        ok = p.returncode == 1 and len(lines) == len(want) and all(
            w in l for w, l in zip(want, lines))
        if not ok:
            self.failures.append(name)
            print(f"FAIL {name}: exit {p.returncode}, stderr:\n  " + "\n  ".join(lines) +
                  "\n  expected lines holding:\n  " + "\n  ".join(want))
        else:
            print(f"ok   {name}: {len(lines)} line(s): {lines[0]}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--zerotrain", required=True)
    ap.add_argument("--root", required=True)
    ap.add_argument("--work", required=True)
    args = ap.parse_args()
    h = Harness(pathlib.Path(args.zerotrain).resolve(), pathlib.Path(args.root).resolve(),
                pathlib.Path(args.work))
    w, zt = h.work, h.zt
    stage7 = "[config] zero_optimization.stage: expected 0, 1, 2 or 3, got 7"
    bad_config = h.train(w / "a", extra=["--deepspeed", str(h.bad_ds)])
    h.expect("bad ds_config, zerotrain launch -n 4", [zt, "launch", "-n", "4", "--"] + bad_config,
             [f"[rank 0] {stage7}", "[launch] rank"])
    h.expect("bad ds_config, zerotrain launch -n 4 --mpi",
             [zt, "launch", "-n", "4", "--mpi", "--"] + bad_config,
             [f"[rank 0] {stage7}", "[launch] mpirun exited with code 1"])
    h.expect("bad ds_config, train --nproc 4", bad_config + ["--nproc", "4"],
             [f"[rank 0] {stage7}", "[launch] mpirun exited with code 1"])
    h.expect("bad ds_config, mpirun -q -n 4", h.mpirun + ["-n", "4"] + bad_config, [stage7])
    h.expect("not a token file, mpirun -q -n 4",
             h.mpirun + ["-n", "4"] + h.train(w / "b", data=h.not_tokens),
             ["shorter than the 64-byte header of a token file"])
    # A checkpoint of 2 ranks, resumed at 4 with the same micro-batch: another global batch.
    h.run_ok(h.train(w / "c", extra=["--nproc", "2"]))
    h.expect("resume at another world size, mpirun -q -n 4",
             h.mpirun + ["-n", "4"] + h.train(w / "c", extra=["--resume", str(w / "c")], steps=4),
             ["global_batch is 8 but the checkpoint was saved with global_batch 4"])
    # Ranks 2 and 3 get the bad ds_config: each says so, with its rank.
    h.expect("an error of ranks 2 and 3 only, mpirun -q (MPMD)",
             h.mpirun + ["-n", "2"] + h.train(w / "d") + [":", "-n", "2"] +
             h.train(w / "d", extra=["--deepspeed", str(h.bad_ds)]),
             [f"[rank ", f"[rank "])
    if h.failures:
        sys.exit(f"[rank_errors] {len(h.failures)} failed")
    print("[rank_errors] all passed")


if __name__ == "__main__":
    main()
