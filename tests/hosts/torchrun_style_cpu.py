#!/usr/bin/env python3
"""CPU ranks started torchrun-style on one host join one MPI world (comm/mpi_join.h):
`zerotrain launch -n N -- zerotrain train --device cpu` (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT;
no mpirun) ends with the losses, gradient norms and final weights of `mpirun -n N zerotrain train`,
bitwise, and leaves no process behind (rank 0's ompi-server included). ctest
train_torchrun_style_cpu; across two hosts: two_hosts.py.

Run: torchrun_style_cpu.py --zerotrain BIN --work DIR
"""
import argparse
import json
import pathlib
import shutil
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]
MODEL = ROOT / "assets/models/kjv-llama-4m/config.json"
TOKENIZER = ROOT / "assets/tokenizers/kjv-bpe-4096/tokenizer.json"
TEXT = ROOT / "docs/ARCHITECTURE.md"
STEPS = 6


def metrics(out):
    rows = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    return {j["step"]: (j["loss"], j["grad_norm"]) for j in rows}


def run(cmd, what):
    """Runs cmd in a session of its own; fails on a non-zero exit or a process of the session
    (a rank, rank 0's ompi-server) still there 10 s after it."""
    p = subprocess.Popen([str(c) for c in cmd], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True, start_new_session=True)
    text = p.communicate(timeout=180)[0]
    if p.returncode != 0:
        sys.exit(f"FAIL {what} exited {p.returncode}:\n{text[-3000:]}")
    t0 = time.time()
    while True:
        left = subprocess.run(["pgrep", "-a", "-s", str(p.pid)], capture_output=True,
                              text=True).stdout.strip()
        if not left:
            return text
        if time.time() - t0 > 10:
            sys.exit(f"FAIL {what}: processes left:\n{left}")
        time.sleep(0.1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--zerotrain", required=True)
    ap.add_argument("--work", required=True)
    args = ap.parse_args()
    work = pathlib.Path(args.work)
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    zt = args.zerotrain
    tokens = work / "tok.bin"
    run([zt, "data", "prepare", "--tokenizer", TOKENIZER, "--input", TEXT, "--output", tokens],
        "data prepare")
    for n, stage in [(2, 2), (3, 3)]:
        train = [zt, "train", "--model", MODEL, "--data", tokens, "--device", "cpu", "--steps",
                 STEPS, "--log-every", "1", "--seq-len", "32", "--micro-batch", "2",
                 "--zero-stage", stage]
        ref, out = work / f"mpirun-{n}", work / f"launch-{n}"
        run(["mpirun", "-n", n, "--oversubscribe", "--bind-to", "none"] + train + ["--out", ref],
            f"mpirun -n {n}")
        run([zt, "launch", "-n", n, "--"] + train + ["--out", out], f"zerotrain launch -n {n}")
        what = f"{n} ranks started torchrun-style, ZeRO-{stage}"
        if metrics(ref) != metrics(out) or len(metrics(out)) != STEPS:
            sys.exit(f"FAIL {what}: metrics differ from mpirun's:\n{metrics(ref)}\n{metrics(out)}")
        if (ref / "model/model.safetensors").read_bytes() != \
                (out / "model/model.safetensors").read_bytes():
            sys.exit(f"FAIL {what}: final weights differ from mpirun's")
        print(f"ok   {what}: {STEPS} losses, gradient norms and final weights equal mpirun -n {n}'s "
              f"bitwise; nothing left", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
