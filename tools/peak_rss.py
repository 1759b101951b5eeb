#!/usr/bin/env python3
"""Runs a command and records its host memory peak (the largest resident set of it and its
children, getrusage's ru_maxrss; pinned host memory counts, being resident) with its exit code and
wall time as JSON. With --stop-after FILE the command is sent SIGTERM once FILE exists and is not
empty (a run whose result is written need not spend minutes saving a checkpoint); the JSON then
says "stopped": true. Used by tools/device_run_offload.sh on the GPU machine.

  tools/peak_rss.py --json out.json [--stop-after run/metrics.jsonl] -- zerotrain train ...
"""
import argparse
import json
import os
import resource
import signal
import subprocess
import sys
import time


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--json", required=True)
    p.add_argument("--stop-after", default="")
    p.add_argument("command", nargs=argparse.REMAINDER)
    a = p.parse_args()
    cmd = a.command[1:] if a.command[:1] == ["--"] else a.command
    if not cmd:
        sys.exit("[peak_rss] no command given")
    t0 = time.monotonic()
    child = subprocess.Popen(cmd)
    stopped = False
    while child.poll() is None:
        if a.stop_after and os.path.exists(a.stop_after) and os.path.getsize(a.stop_after) > 0:
            time.sleep(1.0)  # the line is flushed whole; let the process finish its log output
            if child.poll() is None:
                child.send_signal(signal.SIGTERM)
                stopped = True
            try:
                child.wait(timeout=30)
            except subprocess.TimeoutExpired:
                child.kill()
            break
        time.sleep(0.5)
    rc = child.wait()
    peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    result = {"rc": rc, "stopped": stopped, "wall_s": round(time.monotonic() - t0, 2),
              "host_peak_gib": round(peak_kib / 2**20, 3), "command": cmd}
    with open(a.json, "w") as f:
        json.dump(result, f, indent=1)
    sys.exit(0 if stopped else (rc if rc >= 0 else 128 - rc))


if __name__ == "__main__":
    main()
