#!/usr/bin/env python3
"""The soak of issue 17 item 6: a 2-rank CPU training job (`zerotrain train --nproc 2`, the small
llama of fault_harness.py) runs for a given time with a checkpoint about every minute (the interval
in steps calibrated by a short run first), the newest two kept, and an evaluation between
checkpoints; its memory must stay flat. A loaded machine slows the checkpoints: the soak then goes
on until it has seen five (at most three times its length).

Watched two ways: from outside, each rank's VmRSS (/proc/<pid>/status) every few seconds, and from
inside, the host memory rank 0 logs in metrics.jsonl at each logged step (host_rss_gib,
heap_in_use_gib: core/host_memory_stats.h). After a warm-up (the first two checkpoints), a
least-squares line through each series gives its growth; the run is flat when every series grows
by less than 1 MiB per checkpoint and less than 2% of its size over the whole run. The run is then
stopped with SIGTERM (it exits 143 with a checkpoint of its last step) and no process may be left.

  soak.py --zerotrain BIN --work DIR [--minutes 20] [--checkpoint-seconds 60] [--json OUT]
  soak.py ... --minutes 1 --checkpoint-seconds 6            the short mode ctest runs (soak_short)
  soak.py ... --leak-bytes 1048576 --expect-leak            ZT_FAULT_LEAK_BYTES makes each step
                                                            keep that much: the soak must say
                                                            "not flat" (soak_short_leak)
  soak.py --selftest                                        the decision on synthetic series

docs/faults.md records the 20-minute figures; bench/results/soak_cpu.json its summary.
"""
import argparse
import json
import os
import pathlib
import platform
import shutil
import signal
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]
MODEL = ROOT / "assets/models/kjv-llama-4m/config.json"
TOKENIZER = ROOT / "assets/tokenizers/kjv-bpe-4096/tokenizer.json"
TRAIN_TEXT = ROOT / "docs/ARCHITECTURE.md"
EVAL_TEXT = ROOT / "README.md"
SEQ_LEN = 64
MICRO_BATCH = 2
NPROC = 2
WARMUP_CHECKPOINTS = 2
MAX_GROWTH_PER_CHECKPOINT_MIB = 1.0
MAX_GROWTH_FRACTION = 0.02
MIB = 1 << 20


# ---------------------------------------------------------------------------------------------
# The decision: a line through (x, value) after the warm-up.

def fit_line(xs, ys):
    """Least-squares slope and intercept; (0, mean) for fewer than two distinct xs."""
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    if sxx == 0:
        return 0.0, my
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx
    return slope, my - slope * mx


def judge(name, xs, ys, x_per_checkpoint, x_per_hour):
    """Figures of one series (values in bytes) and whether it is flat.

    xs: the series' clock (seconds or checkpoints) after the warm-up; x_per_checkpoint and
    x_per_hour convert its slope.
    """
    if len(xs) < 3:
        return {"series": name, "samples": len(xs), "flat": False,
                "why": "fewer than 3 samples after the warm-up"}
    slope, intercept = fit_line(xs, ys)
    start = intercept + slope * xs[0]
    growth = slope * (xs[-1] - xs[0])
    per_checkpoint = slope * x_per_checkpoint
    fraction = growth / start if start > 0 else 0.0
    flat = per_checkpoint < MAX_GROWTH_PER_CHECKPOINT_MIB * MIB and fraction < MAX_GROWTH_FRACTION
    return {"series": name, "samples": len(xs), "flat": flat,
            "first_mib": round(ys[0] / MIB, 2), "last_mib": round(ys[-1] / MIB, 2),
            "max_mib": round(max(ys) / MIB, 2),
            "fitted_growth_mib": round(growth / MIB, 3),
            "growth_per_checkpoint_mib": round(per_checkpoint / MIB, 4),
            "slope_mib_per_hour": round(slope * x_per_hour / MIB, 3),
            "growth_percent": round(100 * fraction, 3)}


def selftest():
    """The decision on synthetic series: noise and a warm-up step are flat, a leak is not."""
    import random
    rnd = random.Random(7)
    seconds = [5.0 * i for i in range(240)]  # 20 minutes sampled every 5 s, checkpoints each 60 s
    base = 300 * MIB
    cases = {
        "noise": ([base + rnd.uniform(-2, 2) * MIB for _ in seconds], True),
        "sawtooth of a save": ([base + (8 * MIB if int(t) % 60 < 10 else 0) for t in seconds], True),
        "0.25 MiB per checkpoint": ([base + 0.25 * MIB * t / 60 for t in seconds], True),
        "2 MiB per checkpoint": ([base + 2 * MIB * t / 60 for t in seconds], False),
        "slow but 3% in all": ([base + 0.03 * base * t / seconds[-1] for t in seconds], False),
    }
    bad = []
    for name, (ys, want) in cases.items():
        got = judge(name, seconds, ys, 60.0, 3600.0)
        print(f"{'ok  ' if got['flat'] == want else 'FAIL'} {name}: flat={got['flat']} "
              f"({got['growth_per_checkpoint_mib']} MiB per checkpoint, "
              f"{got['growth_percent']}%)")
        if got["flat"] != want:
            bad.append(name)
    few = judge("two samples", [0.0, 1.0], [base, base], 1.0, 1.0)
    if few["flat"]:
        bad.append("two samples")
    if bad:
        sys.exit(f"[soak] selftest: wrong decision for {bad}")
    print("[soak] selftest: every decision as expected")


# ---------------------------------------------------------------------------------------------
# The processes.

def children_of():
    """{ppid: [pid, ...]} over every process."""
    tree = {}
    for d in pathlib.Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            stat = (d / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat[stat.rfind(")") + 2:].split()[1])
        tree.setdefault(ppid, []).append(int(d.name))
    return tree


def rank_pids(root):
    """{rank: pid} of the MPI ranks under the process `root`."""
    tree, ranks, todo = children_of(), {}, [root]
    while todo:
        pid = todo.pop()
        todo += tree.get(pid, [])
        try:
            env = pathlib.Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
        except OSError:
            continue
        for item in env:
            if item.startswith(b"OMPI_COMM_WORLD_RANK="):
                ranks[int(item.split(b"=", 1)[1])] = pid
    return ranks


def vm_rss_bytes(pid):
    try:
        for line in pathlib.Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def survivors(out):
    p = subprocess.run(["pgrep", "-f", "--", f"--out {out}( |$)"], capture_output=True, text=True)
    return [int(x) for x in p.stdout.split()]


def records(out):
    path = out / "metrics.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def prepare(zt, work):
    for text, name in [(TRAIN_TEXT, "train.bin"), (EVAL_TEXT, "eval.bin")]:
        subprocess.run([zt, "data", "prepare", "--tokenizer", str(TOKENIZER), "--input", str(text),
                        "--output", str(work / name)], check=True, capture_output=True)


def train_args(zt, work, out, steps, extra):
    return [zt, "train", "--model", str(MODEL), "--data", str(work / "train.bin"), "--out",
            str(out), "--device", "cpu", "--steps", str(steps), "--seq-len", str(SEQ_LEN),
            "--micro-batch", str(MICRO_BATCH), "--nproc", str(NPROC), "--stop-grace", "60"] + extra


def env_of(leak_bytes):
    e = dict(os.environ, OMP_NUM_THREADS="1", OMP_WAIT_POLICY="PASSIVE")
    if leak_bytes:
        e["ZT_FAULT_LEAK_BYTES"] = str(leak_bytes)
    return e


def seconds_per_step(zt, work):
    """A 60-step run of the same job: the step time of its last logged interval."""
    out = work / "calibrate"
    p = subprocess.run(train_args(zt, work, out, 60, ["--log-every", "20", "--save-every", "0"]),
                       capture_output=True, text=True, env=env_of(0))
    if p.returncode != 0:
        sys.exit(f"[soak] the calibration run failed ({p.returncode}):\n{p.stdout[-2000:]}"
                 f"{p.stderr[-2000:]}")
    rate = [r for r in records(out) if "type" not in r][-1]["tokens_per_s_per_gpu"]
    shutil.rmtree(out, ignore_errors=True)
    return SEQ_LEN * MICRO_BATCH / rate


def load_average():
    return [round(x, 2) for x in os.getloadavg()]


def machine():
    cpu = ""
    try:
        cpu = next(l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo")
                   if l.startswith("model name"))
    except (OSError, StopIteration):
        pass
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    return {"host": platform.node(), "cpu": cpu, "cores": os.cpu_count(),
            "memory_gib": round(mem / (1 << 30), 1), "kernel": platform.release()}


def commit():
    p = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True,
                       text=True)
    return p.stdout.strip()


# ---------------------------------------------------------------------------------------------
# The soak.

def soak(a):
    work = pathlib.Path(a.work)
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    prepare(a.zerotrain, work)
    measured_commit = commit()  # at the start: the tree may move on while the soak runs
    step_s = seconds_per_step(a.zerotrain, work)
    save_every = max(4, round(a.checkpoint_seconds / step_s))
    log_every = max(1, round(a.sample_seconds / step_s))
    eval_every = max(1, save_every // 2)
    extra = ["--log-every", str(log_every), "--save-every", str(save_every), "--keep-checkpoints",
             "2", "--eval-data", str(work / "eval.bin"), "--eval-every", str(eval_every),
             "--eval-batches", "2"]
    out = work / "run"
    cmd = train_args(a.zerotrain, work, out, 10 ** 9, extra)
    print(f"[soak] {step_s * 1000:.1f} ms per step: a checkpoint every {save_every} steps, a log "
          f"line every {log_every}, an evaluation every {eval_every}; {a.minutes} min", flush=True)
    load_start = load_average()
    log = open(work / "train.log", "w")
    t0 = time.time()
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env_of(a.leak_bytes),
                            start_new_session=True)
    samples = {}       # rank -> [(seconds, bytes)]
    checkpoints = []   # (seconds, tag) as `latest` changes
    latest = out / "checkpoints" / "latest"
    loads = []
    # A loaded machine slows the steps and so the checkpoints: the soak goes on (up to three times
    # its length) until it has seen enough of them to judge.
    def enough():
        elapsed = time.time() - t0
        return elapsed >= a.minutes * 60 and (len(checkpoints) >= WARMUP_CHECKPOINTS + 3 or
                                              elapsed >= 3 * a.minutes * 60)

    while not enough() and proc.poll() is None:
        now = time.time() - t0
        for rank, pid in rank_pids(proc.pid).items():
            rss = vm_rss_bytes(pid)
            if rss is not None:
                samples.setdefault(rank, []).append((now, rss))
        try:
            tag = latest.read_text().strip()
            if not checkpoints or checkpoints[-1][1] != tag:
                checkpoints.append((now, tag))
        except OSError:
            pass
        loads.append(os.getloadavg()[0])
        time.sleep(a.sample_seconds)
    ran_s = time.time() - t0
    ended_early = proc.poll() is not None
    proc.send_signal(signal.SIGTERM)
    try:
        rc = proc.wait(timeout=180)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        rc = proc.wait()
    log.close()
    failures = []
    if ended_early:
        failures.append(f"the run ended before the soak did (exit {rc}); see {work}/train.log")
    elif rc != 143:
        failures.append(f"the stop on SIGTERM exited {rc}, not 143; see {work}/train.log")
    deadline = time.time() + 60
    while survivors(out) and time.time() < deadline:
        time.sleep(0.2)
    if survivors(out):
        failures.append(f"processes left behind: {survivors(out)}")
        for pid in survivors(out):
            os.kill(pid, signal.SIGKILL)

    # The clocks: seconds for the outside samples, checkpoints for the logged records.
    interval = ((checkpoints[-1][0] - checkpoints[0][0]) / (len(checkpoints) - 1)
                if len(checkpoints) > 1 else a.checkpoint_seconds)
    warm_s = checkpoints[WARMUP_CHECKPOINTS - 1][0] if len(checkpoints) >= WARMUP_CHECKPOINTS \
        else float("inf")
    series = []
    for rank in sorted(samples):
        kept = [(t, b) for t, b in samples[rank] if t >= warm_s]
        s = judge(f"rank {rank} VmRSS", [t for t, _ in kept], [b for _, b in kept], interval,
                  3600.0)
        whole = [b for _, b in samples[rank]]
        s["run_start_mib"] = round(whole[0] / MIB, 2)
        s["run_max_mib"] = round(max(whole) / MIB, 2)
        series.append(s)
    steps = [r for r in records(out) if "type" not in r]
    evals = [r for r in records(out) if r.get("type") == "eval"]
    logged = [r for r in steps if r["step"] > WARMUP_CHECKPOINTS * save_every]
    x = [r["step"] / save_every for r in logged]
    per_hour = 3600.0 / interval
    series.append(judge("rank 0 host_rss_gib (metrics.jsonl)", x,
                        [r["host_rss_gib"] * (1 << 30) for r in logged], 1.0, per_hour))
    if logged and logged[0].get("heap_in_use_gib") is not None:
        series.append(judge("rank 0 heap_in_use_gib (metrics.jsonl)", x,
                            [r["heap_in_use_gib"] * (1 << 30) for r in logged], 1.0, per_hour))
    not_flat = [s["series"] for s in series if not s["flat"]]
    summary = {
        "command": " ".join(["tests/faults/soak.py"] + sys.argv[1:]),
        "train_command": " ".join(cmd[1:]),
        "commit": measured_commit, "machine": machine(),
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "minutes": a.minutes, "seconds_run": round(ran_s, 1),
        "leak_bytes_per_step": a.leak_bytes,
        "ms_per_step_calibrated": round(step_s * 1000, 2),
        "steps": steps[-1]["step"] if steps else 0, "save_every": save_every,
        "checkpoints_seen": len(checkpoints),
        "checkpoint_interval_s": round(interval, 1), "evaluations": len(evals),
        "load_average_start": load_start, "load_average_end": load_average(),
        "load_average_1min_mean": round(sum(loads) / max(1, len(loads)), 2),
        "stop_exit_code": rc,
        "thresholds": {"growth_per_checkpoint_mib": MAX_GROWTH_PER_CHECKPOINT_MIB,
                       "growth_percent": 100 * MAX_GROWTH_FRACTION,
                       "warmup_checkpoints": WARMUP_CHECKPOINTS},
        "series": series, "flat": not not_flat, "failures": failures,
    }
    for s in series:
        print(f"[soak] {'flat    ' if s['flat'] else 'NOT FLAT'} {s['series']}: " +
              (f"{s.get('first_mib')} -> {s.get('last_mib')} MiB (max {s.get('max_mib')}), "
               f"{s.get('slope_mib_per_hour')} MiB/h, {s.get('growth_per_checkpoint_mib')} MiB "
               f"per checkpoint, {s.get('growth_percent')}% in all" if "why" not in s
               else s["why"]), flush=True)
    print(f"[soak] {summary['steps']} steps, {len(checkpoints)} checkpoints every "
          f"{interval:.1f} s, {len(evals)} evaluations; load average {load_start} -> "
          f"{summary['load_average_end']}")
    if a.json:
        pathlib.Path(a.json).write_text(json.dumps(summary, indent=1) + "\n")
    if len(checkpoints) < WARMUP_CHECKPOINTS + 2:
        failures.append(f"only {len(checkpoints)} checkpoints: too few to judge")
    if a.expect_leak:
        if not_flat:
            print(f"[soak] the injected leak was seen in: {not_flat}")
        else:
            failures.append("the injected leak was not seen: every series looks flat")
    elif not_flat:
        failures.append(f"not flat: {not_flat}")
    if failures:
        sys.exit("[soak] " + "; ".join(failures) + f" (the run is in {work})")
    print("[soak] passed")
    shutil.rmtree(work, ignore_errors=True)


def main():
    global MAX_GROWTH_FRACTION
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--zerotrain")
    ap.add_argument("--work")
    ap.add_argument("--minutes", type=float, default=20.0)
    ap.add_argument("--checkpoint-seconds", type=float, default=60.0)
    ap.add_argument("--sample-seconds", type=float, default=5.0,
                    help="outside RSS sampling and (about) the logging interval")
    ap.add_argument("--leak-bytes", type=int, default=0,
                    help="ZT_FAULT_LEAK_BYTES for the ranks: bytes kept per step")
    ap.add_argument("--expect-leak", action="store_true",
                    help="pass only when some series is not flat")
    ap.add_argument("--json", help="write the summary here")
    ap.add_argument("--max-growth-percent", type=float, default=100 * MAX_GROWTH_FRACTION,
                    help="growth in all a flat series stays under (default 2; a run of a minute "
                         "still holds the allocator's early growth, so the short ctest allows more)")
    ap.add_argument("--selftest", action="store_true")
    a = ap.parse_args()
    MAX_GROWTH_FRACTION = a.max_growth_percent / 100
    if a.selftest:
        return selftest()
    if not a.zerotrain or not a.work:
        ap.error("--zerotrain and --work are required")
    soak(a)


if __name__ == "__main__":
    main()
