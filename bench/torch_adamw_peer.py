#!/usr/bin/env python3
"""The PyTorch peer of bench/optim_bench.cpp: times torch.optim.AdamW on the CPU over N float32
parameters held as one flat tensor (torch's optimizers need params and grads of one dtype, so this
is the fp32-master update that zerotrain's bf16-in/bf16-out step replaces; both move 28 bytes per
parameter). Uses fused=True where this torch supports it on the CPU (2.4+), else foreach=True.
Also times the same job as zerotrain's step done the torch way: the bf16 gradient upcast into the
f32 grad, the fused step, the f32 master rounded into a bf16 parameter copy (`same_job_seconds`).
Prints one JSON line: torch_version, impl, n, threads, seconds (median), params_per_s,
same_job_seconds.

Run: python3 bench/torch_adamw_peer.py [--n 1e9] [--reps 5] [--threads T] > torch.json
     build/bin/optim_bench --n 1e9 --peer torch.json
"""
import argparse
import json
import statistics
import time

import torch


def make_optimizer(param):
    try:
        opt = torch.optim.AdamW([param], lr=1e-3, weight_decay=0.01, fused=True)
        opt.step()  # older torch accepts fused=True but fails on CPU tensors at the first step
        return opt, "fused"
    except (RuntimeError, TypeError, ValueError):
        return torch.optim.AdamW([param], lr=1e-3, weight_decay=0.01, foreach=True), "foreach"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=float, default=1e9)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--threads", type=int, default=0, help="torch threads (default: torch's own)")
    args = ap.parse_args()
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    n = int(args.n)
    param = torch.nn.Parameter(torch.rand(n, dtype=torch.float32) - 0.5)
    param.grad = (torch.rand(n, dtype=torch.float32) - 0.5) * 1e-2
    opt, impl = make_optimizer(param)
    for _ in range(2):
        opt.step()
    times = []
    for _ in range(args.reps):
        t0 = time.perf_counter()
        opt.step()
        times.append(time.perf_counter() - t0)
    seconds = statistics.median(times)
    # bf16 gradient in, bf16 parameter out, as a torch program has to do it around the f32 step.
    grad16 = param.grad.to(torch.bfloat16)
    param16 = torch.empty(n, dtype=torch.bfloat16)
    same = []
    for _ in range(args.reps):
        t0 = time.perf_counter()
        param.grad.copy_(grad16)
        opt.step()
        param16.copy_(param.detach())
        same.append(time.perf_counter() - t0)
    print(json.dumps({"torch_version": torch.__version__, "impl": impl, "n": n,
                      "threads": torch.get_num_threads(), "seconds": seconds,
                      "params_per_s": n / seconds, "same_job_seconds": statistics.median(same)}))


if __name__ == "__main__":
    main()
