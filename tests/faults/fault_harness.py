#!/usr/bin/env python3
"""Faults of multi-rank CPU runs through the zerotrain binary (issue 17 item 6, issue 16 item 8).

  sigterm  SIGTERM to `train --nproc N` (the launcher, which passes it to the ranks through
           mpirun as SIGUSR2): the run exits 143 with the line "stopped on SIGTERM after step
           S", `latest` names step S, no process is left, and a resume ends with the losses and
           weights of the uninterrupted run, bitwise; the same with SIGUSR2 to a direct
           `mpirun -n 2 zerotrain train` (mpirun's exit code is its own, non-zero).
  nan      ZT_FAULT_NAN_GRAD at stages 0-3 under 2 ranks: stop names the step and the parameter
           on exit 1 and writes no model/; skip finishes with one skipped step. ZT_FAULT_NAN_LOSS
           stops.
  kill9    kill -9 of one random rank at a random moment (2 and 4 ranks): every survivor exits
           within 60 s, the launcher exits non-zero naming the lost rank, no process is left, and
           a resume from `latest` ends bitwise on the uninterrupted run.
  launcher kill -9 of the `train --nproc` process at random moments: no process survives.

Run: fault_harness.py --zerotrain BIN --work DIR [--full] [--only MODE,...]
The default (CI) takes a few moments per mode; --full takes 20 kill moments per world size and
10 launcher kills (docs/faults.md records its figures).
"""
import argparse
import json
import os
import pathlib
import random
import re
import shutil
import signal
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]
MODEL = ROOT / "assets/models/kjv-llama-4m/config.json"
TOKENIZER = ROOT / "assets/tokenizers/kjv-bpe-4096/tokenizer.json"
TEXT = ROOT / "docs/ARCHITECTURE.md"
STEPS = 16
KILL_STEPS = 40  # room for the kill to land well before the end


class Harness:
    def __init__(self, zt, work):
        self.zt = zt
        self.work = pathlib.Path(work)
        shutil.rmtree(self.work, ignore_errors=True)
        self.work.mkdir(parents=True)
        self.tokens = self.work / "tok.bin"
        subprocess.run([zt, "data", "prepare", "--tokenizer", str(TOKENIZER), "--input", str(TEXT),
                        "--output", str(self.tokens)], check=True, capture_output=True)
        self.failures = []
        self.figures = {}
        self.straight = {}

    def args(self, out, nproc, stage=0, extra=(), steps=STEPS):
        a = ["train", "--model", str(MODEL), "--data", str(self.tokens), "--out", str(out),
             "--device", "cpu", "--steps", str(steps), "--log-every", "1", "--seq-len", "32",
             "--micro-batch", "2", "--zero-stage", str(stage), "--save-every", "2",
             "--keep-checkpoints", "3", "--stop-grace", "60"]
        if nproc > 1:
            a += ["--nproc", str(nproc)]
        return [self.zt] + a + list(extra)

    def start(self, cmd, env=None):
        e = dict(os.environ, OMP_NUM_THREADS="1")
        e.update(env or {})
        return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                env=e, start_new_session=True)

    def run(self, cmd, env=None, timeout=300):
        """(exit code, output); a run past `timeout` is killed whole and reported as -9."""
        p = self.start(cmd, env)
        try:
            out, _ = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            out, _ = p.communicate()
            return -9, f"(killed after {timeout} s)\n{out}"
        return p.returncode, out

    def fail(self, what):
        print(f"FAIL {what}", flush=True)
        self.failures.append(what)

    def ok(self, what):
        print(f"ok   {what}", flush=True)

    def straight_run(self, nproc, stage=0, steps=STEPS):
        key = (nproc, stage, steps)
        if key not in self.straight:
            out = self.work / f"straight-{nproc}-{stage}-{steps}"
            rc, text = self.run(self.args(out, nproc, stage, steps=steps))
            if rc != 0:
                sys.exit(f"[fault_harness] the straight run failed ({rc}):\n{text}")
            self.straight[key] = out
        return self.straight[key]


def losses(out):
    path = out / "metrics.jsonl"
    if not path.exists():
        return {}
    return {j["step"]: j["loss"] for j in map(json.loads, path.read_text().splitlines())}


def wait_for_step(out, step, proc, limit=120):
    t0 = time.time()
    while time.time() - t0 < limit and proc.poll() is None:
        if len(losses(out)) >= step:
            return True
        time.sleep(0.02)
    return False


def survivors(out):
    """Processes whose command line names this run's --out."""
    p = subprocess.run(["pgrep", "-f", "--", f"--out {out}( |$)"], capture_output=True, text=True)
    return [int(x) for x in p.stdout.split()]


def no_process_left(h, what, out, limit=60):
    t0 = time.time()
    while survivors(out) and time.time() - t0 < limit:
        time.sleep(0.1)
    left = survivors(out)
    if left:
        h.fail(f"{what}: processes left behind: {left}")
        for pid in left:
            os.kill(pid, signal.SIGKILL)
        return False
    return True


def resume_matches(h, what, out, nproc, stage=0, steps=STEPS):
    ref = h.straight_run(nproc, stage, steps)
    rc, text = h.run(h.args(out, nproc, stage, ["--resume", str(out)], steps=steps))
    if rc != 0:
        return h.fail(f"{what}: the resume exited {rc}:\n{text[-2000:]}")
    a, b = losses(ref), losses(out)
    bad = [s for s in a if b.get(s) != a[s]]
    if bad:
        return h.fail(f"{what}: losses differ from the straight run at steps {bad}")
    if (ref / "model/model.safetensors").read_bytes() != (out / "model/model.safetensors").read_bytes():
        return h.fail(f"{what}: final weights differ from the straight run")
    return True


def sigterm(h, full):
    for nproc, stage in [(2, 3), (4, 1)] if full else [(2, 3)]:
        what = f"sigterm train --nproc {nproc} stage {stage}"
        out = h.work / f"term-{nproc}-{stage}"
        p = h.start(h.args(out, nproc, stage))
        at = random.randint(3, STEPS - 4)
        if not wait_for_step(out, at, p):
            h.fail(f"{what}: never reached step {at}")
            continue
        t0 = time.time()
        p.send_signal(signal.SIGTERM)
        text, _ = p.communicate(timeout=120)
        took = time.time() - t0
        line = [l for l in text.splitlines() if "stopped on SIGTERM after step" in l]
        latest = (out / "checkpoints/latest").read_text().strip() if (out / "checkpoints/latest").exists() else ""
        if p.returncode != 143 or not line:
            h.fail(f"{what}: exit {p.returncode}, stop line {line}:\n{text[-2000:]}")
            continue
        step = int(line[0].split("after step ")[1].split(";")[0])
        if latest != f"step-{step:08d}":
            h.fail(f"{what}: latest {latest!r} after a stop at step {step}")
            continue
        if no_process_left(h, what, out) and resume_matches(h, what, out, nproc, stage):
            h.ok(f"{what}: signal at step >= {at}, stopped after step {step} in {took:.1f} s, "
                 f"resumed bitwise")
    # mpirun directly: it forwards SIGUSR2 at once (SIGTERM only after odls_base_sigkill_timeout).
    what = "sigusr2 mpirun -n 2 stage 2"
    out = h.work / "term-mpirun"
    cmd = ["mpirun", "-n", "2", "--oversubscribe", "--bind-to", "none"]
    if os.geteuid() == 0:
        cmd.append("--allow-run-as-root")
    p = h.start(cmd + h.args(out, 1, 2))
    if wait_for_step(out, 4, p):
        p.send_signal(signal.SIGUSR2)
        text, _ = p.communicate(timeout=180)
        if p.returncode == 0 or "stopped on SIGUSR2 after step" not in text:
            h.fail(f"{what}: exit {p.returncode}:\n{text[-2000:]}")
        elif no_process_left(h, what, out) and resume_matches(h, what, out, 2, 2):
            h.ok(f"{what}: stopped with a checkpoint (mpirun exit {p.returncode}), resumed bitwise")
    else:
        h.fail(f"{what}: never reached step 4")


def nan(h, full):
    param = "model.layers.1.mlp.down_proj.weight"
    for stage in [0, 1, 2, 3] if full else [0, 3]:
        what = f"nan grad stop stage {stage}"
        out = h.work / f"nan-stop-{stage}"
        rc, text = h.run(h.args(out, 2, stage), env={"ZT_FAULT_NAN_GRAD": f"5:{param}"})
        if rc == 0 or f"step 5: the gradient norm is nan, first in the gradient of {param}" not in text:
            h.fail(f"{what}: exit {rc}:\n{text[-2000:]}")
        elif (out / "model").exists() or (out / "checkpoints/latest").read_text().strip() != "step-00000004":
            h.fail(f"{what}: model/ written or latest moved past step 4")
        else:
            h.ok(f"{what}: exit {rc} naming step 5 and {param}; latest stays step 4")
        what = f"nan grad skip stage {stage}"
        out = h.work / f"nan-skip-{stage}"
        rc, text = h.run(h.args(out, 2, stage, ["--on-nonfinite", "skip"]),
                         env={"ZT_FAULT_NAN_GRAD": f"5:{param}:inf"})
        if rc != 0 or not (out / "model/model.safetensors").exists():
            h.fail(f"{what}: exit {rc}:\n{text[-2000:]}")
        else:
            h.ok(f"{what}: finished with the step skipped")
    what = "nan loss"
    out = h.work / "nan-loss"
    rc, text = h.run(h.args(out, 2, 2), env={"ZT_FAULT_NAN_LOSS": "3"})
    if rc == 0 or "step 3: the loss is nan" not in text:
        h.fail(f"{what}: exit {rc}:\n{text[-2000:]}")
    else:
        h.ok(f"{what}: stopped at step 3")


def rank_pids(out, nproc, limit=30):
    """The training ranks' pids by MPI rank: `train` processes of this --out without --nproc (the
    launcher's), their rank from the environment mpirun gave them."""
    t0 = time.time()
    while time.time() - t0 < limit:
        pids = {}
        for pid in survivors(out):
            try:
                cmd = pathlib.Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
                env = pathlib.Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
            except OSError:
                continue
            rank = [e.split(b"=")[1] for e in env if e.startswith(b"OMPI_COMM_WORLD_RANK=")]
            if b"train" in cmd and b"--nproc" not in cmd and b"launch" not in cmd and rank:
                pids[int(rank[0])] = pid
        if len(pids) == nproc:
            return [pids[r] for r in range(nproc)]
        time.sleep(0.05)
    return []


def kill9(h, full):
    for nproc in (2, 4):
        moments = 20 if full else 1
        times = []
        for k in range(moments):
            what = f"kill -9 rank of {nproc} (#{k + 1})"
            out = h.work / f"kill-{nproc}-{k}"
            p = h.start(h.args(out, nproc, 2, steps=KILL_STEPS))
            pids = rank_pids(out, nproc)
            at = random.randint(1, KILL_STEPS - 12)
            if not pids or not wait_for_step(out, at, p):
                h.fail(f"{what}: ranks {pids}, never reached step {at}")
                p.kill()
                continue
            time.sleep(random.uniform(0, 0.3))
            victim = random.randrange(nproc)
            t0 = time.time()
            os.kill(pids[victim], signal.SIGKILL)
            try:
                text, _ = p.communicate(timeout=60)
            except subprocess.TimeoutExpired:
                h.fail(f"{what}: still running 60 s after the kill")
                os.killpg(p.pid, signal.SIGKILL)
                continue
            took = time.time() - t0
            times.append(took)
            if p.returncode == 0:
                h.fail(f"{what}: exit 0")
                continue
            # mpirun names the lost rank as "Process name: [[job,1],RANK]".
            if not re.search(rf"\[\[\d+,\d+\],{victim}\]|rank {victim} failed", text):
                h.fail(f"{what}: the output never names rank {victim}:\n{text[-1500:]}")
                continue
            if not no_process_left(h, what, out):
                continue
            if not (out / "checkpoints/latest").exists():
                h.ok(f"{what}: exit {p.returncode} in {took:.1f} s before the first checkpoint")
                continue
            if resume_matches(h, what, out, nproc, 2, KILL_STEPS):
                h.ok(f"{what}: rank {victim} killed near step {at}, exit {p.returncode} in "
                     f"{took:.1f} s, resumed bitwise")
            shutil.rmtree(out, ignore_errors=True)  # ~150 MB a run: 40 of them fill a small disk
        if times:
            h.figures[f"kill9_{nproc}_ranks_max_exit_s"] = round(max(times), 2)
            h.figures[f"kill9_{nproc}_ranks_runs"] = len(times)


def launcher(h, full):
    for k in range(10 if full else 2):
        what = f"kill -9 launcher (#{k + 1})"
        out = h.work / f"launcher-{k}"
        p = h.start(h.args(out, 2, 1))
        if not wait_for_step(out, random.randint(1, STEPS - 3), p):
            h.fail(f"{what}: never started")
            continue
        p.kill()
        p.wait()
        t0 = time.time()
        if no_process_left(h, what, out):
            h.ok(f"{what}: nothing survives ({time.time() - t0:.1f} s)")
        shutil.rmtree(out, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--zerotrain", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--full", action="store_true")
    ap.add_argument("--only", default="sigterm,nan,kill9,launcher")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    random.seed(a.seed)
    h = Harness(a.zerotrain, a.work)
    t0 = time.time()
    for mode in a.only.split(","):
        globals()[mode](h, a.full)
    h.figures["seconds"] = round(time.time() - t0, 1)
    print(json.dumps(h.figures))
    if h.failures:
        sys.exit(f"{len(h.failures)} failures (the runs are in {a.work})")
    shutil.rmtree(a.work, ignore_errors=True)  # a short run leaves ~1.5 GB of checkpoints


if __name__ == "__main__":
    main()
