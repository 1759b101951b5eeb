#!/usr/bin/env python3
"""Where a GPU sat idle, from a timeline written by libzt_gpu_timeline.so (gpu_timeline.cpp).

    python3 bench/gpu_timeline/gaps.py t.csv [--start-kernel embedding_fwd --skip 3] [--json out.json]

The window starts at the (skip+1)-th kernel whose name contains --start-kernel (a train_bench run
with --warmup 3 starts its first timed step at the 4th embedding forward) and ends at the last GPU
operation. Prints the GPU's busy and idle time in it, the idle time split into host-bound gaps
(the next operation's launch call had not started when the GPU ran dry) and the rest (work queued
behind a host wait, or a device-side dependency), the gaps by the API call the host was in, the
largest gaps with the kernels on either side, and the busy time by kernel family.
"""
import argparse
import collections
import csv
import json
import re


def family(name):
    n = name.lower()
    if "nvjet" in n or "gemm" in n or "cutlass" in n or "xmma" in n:
        return "gemm (cuBLASLt)"
    if "cudnn" in n or "fmha" in n or "sdpa" in n or "flash" in n:
        return "attention (cuDNN)"
    n = re.sub(r"^void ", "", name).split("(")[0]
    return re.sub(r"kernels::<unnamed>::|optim::<unnamed>::", "", n)[:80]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("timeline")
    ap.add_argument("--start-kernel", default="embedding_fwd")
    ap.add_argument("--skip", type=int, default=0)
    ap.add_argument("--min-gap-us", type=float, default=2.0)
    ap.add_argument("--json")
    a = ap.parse_args()

    gpu, api = [], {}
    api_rows = []
    with open(a.timeline) as f:
        for r in csv.DictReader(f):
            row = (int(r["start_ns"]), int(r["end_ns"]), int(r["correlation"]), r["name"], r["kind"])
            if r["kind"] in "KCS":
                gpu.append(row)
            else:
                api[row[2]] = row
                api_rows.append(row)
    gpu.sort()
    api_rows.sort()
    starts = [g for g in gpu if g[4] == "K" and a.start_kernel in g[3]]
    if len(starts) <= a.skip:
        raise SystemExit(f"gaps: only {len(starts)} kernels named like '{a.start_kernel}'; --skip {a.skip} leaves none")
    t0 = starts[a.skip][0]
    ops = [g for g in gpu if g[0] >= t0]
    t1 = max(g[1] for g in ops)

    busy, idle_host, idle_other = 0, 0, 0
    gaps = []
    by_family = collections.Counter()
    cursor = t0
    prev = None
    for op in ops:
        by_family[family(op[3]) if op[4] == "K" else op[3].split(" ")[0]] += op[1] - op[0]
        if op[0] > cursor:
            gap = op[0] - cursor
            launch = api.get(op[2])
            host_bound = launch is not None and launch[0] > cursor
            gaps.append((gap, host_bound, cursor, prev, op))
            if gap >= a.min_gap_us * 1e3:
                if host_bound:
                    idle_host += gap
                else:
                    idle_other += gap
        busy += max(0, op[1] - max(op[0], cursor))
        if op[1] > cursor:
            cursor, prev = op[1], op
    window = t1 - t0
    small = sum(g[0] for g in gaps if g[0] < a.min_gap_us * 1e3)

    # What the host was in during host-bound gaps: the API calls overlapping each gap, by name.
    by_call = collections.Counter()
    for gap, host_bound, begin, _, op in gaps:
        if not host_bound or gap < a.min_gap_us * 1e3:
            continue
        end = op[0]
        for s, e, _, name, _ in api_rows:
            if s >= end:
                break
            if e > begin:
                by_call[name] += min(e, end) - max(s, begin)

    ms = lambda ns: ns / 1e6
    print(f"window {ms(window):.2f} ms: GPU busy {ms(busy):.2f} ms ({100 * busy / window:.1f}%), "
          f"idle in gaps >= {a.min_gap_us} us: host-bound {ms(idle_host):.2f} ms, other {ms(idle_other):.2f} ms; "
          f"smaller gaps {ms(small):.2f} ms over {sum(1 for g in gaps if g[0] < a.min_gap_us * 1e3)} gaps")
    print("\nhost-bound idle by the API call the host was in (overlap, ms):")
    for name, ns in by_call.most_common(12):
        print(f"  {ms(ns):8.3f}  {name}")
    print("\nlargest gaps:")
    for gap, host_bound, _, prev_op, op in sorted(gaps, key=lambda g: -g[0])[:15]:
        before = family(prev_op[3]) if prev_op else "-"
        print(f"  {gap / 1e3:9.1f} us  {'host' if host_bound else 'other'}  after {before[:50]:50s} before {family(op[3])[:50]}")
    print("\nbusy by kernel family (ms):")
    total = sum(by_family.values())
    for name, ns in by_family.most_common(25):
        print(f"  {ms(ns):8.2f}  {100 * ns / total:5.1f}%  {name}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"window_ms": ms(window), "busy_ms": ms(busy), "idle_host_bound_ms": ms(idle_host),
                       "idle_other_ms": ms(idle_other), "small_gaps_ms": ms(small),
                       "host_calls_in_idle_ms": {k: ms(v) for k, v in by_call.most_common(20)},
                       "busy_by_family_ms": {k: ms(v) for k, v in by_family.most_common(40)}}, f, indent=1)


if __name__ == "__main__":
    main()
