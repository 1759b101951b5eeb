#!/usr/bin/env python3
"""Start-up of `zerotrain train`: launch to the "memory at start" line, timed from outside.

Runs each given binary in turn (alternating, --runs rounds), stops the process as soon as the line
appears and takes its wall time, the 1-minute load average at launch and the process's user and
system CPU seconds up to the stop (wait4's rusage of the killed child), plus the run's own
`start-up (rank 0)` line. On a shared machine --wait-idle waits for a quiet second before each
launch. Prints one JSON object; bench/startup.md describes the case and
bench/results/startup_cpu_local.json holds measured numbers. Example:

    bench/startup_timing.py --model llama3.2_1b.json --data tokens.bin --runs 3 \
        before=/tmp/before/zerotrain after=build-cpu/bin/zerotrain

A binary given as NAME=PATH[:LIBDIR] runs with LD_LIBRARY_PATH=LIBDIR (a copied libzerotrain.so).
"""
import argparse
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import tempfile
import time

LINE = "memory at start"
STARTUP = re.compile(r"start-up \(rank 0\): ([0-9.]+) s")


def idle_fraction(seconds=1.0):
    """The machine's idle CPU share over the next `seconds` (/proc/stat)."""
    def sample():
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:]]
        return v[3] + v[4], sum(v)
    i0, t0 = sample()
    time.sleep(seconds)
    i1, t1 = sample()
    return (i1 - i0) / max(t1 - t0, 1)


def wait_for_idle(threshold, limit_s):
    """Waits until a second passes with at least `threshold` of the CPU idle (at most limit_s)."""
    end = time.monotonic() + limit_s
    idle = idle_fraction()
    while idle < threshold and time.monotonic() < end:
        idle = idle_fraction()
    return idle


def one_run(binary, libdir, args, extra):
    out = tempfile.mkdtemp(prefix="zt_startup_")
    env = dict(os.environ)
    if libdir:
        env["LD_LIBRARY_PATH"] = libdir
    cmd = [binary, "train", "--model", args.model, "--data", args.data, "--out", out, "--steps",
           "1", "--seq-len", "16", "--micro-batch", "1", "--device", "cpu"] + extra
    idle = wait_for_idle(args.wait_idle, 300) if args.wait_idle else None
    load = os.getloadavg()[0]
    start = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env,
                            text=True, bufsize=1)
    wall = None
    self_reported = None
    for line in proc.stdout:
        if wall is None and LINE in line:
            wall = time.monotonic() - start
        m = STARTUP.search(line)
        if m:
            self_reported = float(m.group(1))
        if wall is not None and (self_reported is not None or time.monotonic() - start > wall + 1):
            break
    proc.send_signal(signal.SIGKILL)
    _, _, usage = os.wait4(proc.pid, 0)
    proc.stdout.close()
    shutil.rmtree(out, ignore_errors=True)
    if wall is None:
        raise SystemExit(f"[startup_timing] {binary}: no '{LINE}' line")
    return {"to_memory_at_start_s": round(wall, 2), "self_reported_startup_s": self_reported,
            "load_avg_1min_at_launch": round(load, 2),
            "idle_share_before_launch": None if idle is None else round(idle, 2),
            "user_s": round(usage.ru_utime, 2),
            "sys_s": round(usage.ru_stime, 2)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--pause", type=float, default=5.0, help="seconds between runs")
    ap.add_argument("--extra", default="", help="more train flags, space-separated")
    ap.add_argument("--wait-idle", type=float, default=0.0,
                    help="before each launch, wait (up to 300 s) for a second with this share "
                         "of the CPU idle, e.g. 0.9 on a shared machine")
    ap.add_argument("binaries", nargs="+", help="NAME=PATH[:LIBDIR]")
    args = ap.parse_args()
    named = []
    for b in args.binaries:
        name, _, rest = b.partition("=")
        path, _, libdir = rest.partition(":")
        named.append((name, path, libdir))
    runs = {name: [] for name, _, _ in named}
    for _ in range(args.runs):
        for name, path, libdir in named:
            time.sleep(args.pause)
            runs[name].append(one_run(path, libdir, args, args.extra.split()))
            print(json.dumps({name: runs[name][-1]}), flush=True)
    summary = {}
    for name, rs in runs.items():
        walls = [r["to_memory_at_start_s"] for r in rs]
        summary[name] = {
            "median_to_memory_at_start_s": statistics.median(walls),
            "min_s": min(walls), "max_s": max(walls),
            "median_user_s": statistics.median(r["user_s"] for r in rs),
            "median_sys_s": statistics.median(r["sys_s"] for r in rs),
            "runs": rs}
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
