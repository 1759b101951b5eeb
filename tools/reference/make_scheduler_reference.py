#!/usr/bin/env python3
"""Writes learning-rate (and OneCycle momentum) values of DeepSpeed's schedulers and of the HF
warmup schedules at sample iterations to tests/fixtures/optim/scheduler_reference.json, which
tests/optim/test_schedulers.cpp compares with zerotrain's optim/ schedulers.

DeepSpeed is not installed here, so the formulas of deepspeed/runtime/lr_schedules.py (WarmupLR,
WarmupDecayLR, WarmupCosineLR with its clamped cosine progress, OneCycle with stair counts and
momentum cycling, LRRangeTest) are written out below as plain functions of last_batch_iteration,
operation for operation as the DeepSpeed methods compute them, including the values the
constructors set at last_batch_iteration = -1. The HF ones follow transformers'
get_{constant,linear,cosine}_schedule_with_warmup lambdas, evaluated at step = iteration + 1.

Run: python3 tools/reference/make_scheduler_reference.py [--out tests/fixtures/optim/scheduler_reference.json]
"""
import argparse
import json
import math


def warmup_gamma(it, n, kind):
    if kind == "log":
        return (1.0 / math.log(n)) * math.log(it + 1)
    return it / n


def warmup_lr(it, p):
    n = max(2, p["warmup_num_steps"])
    if it < 0:
        return p["warmup_min_lr"]
    gamma = warmup_gamma(it, n, p["warmup_type"]) if it < n else 1.0
    return p["warmup_min_lr"] + (p["warmup_max_lr"] - p["warmup_min_lr"]) * gamma


def warmup_decay_lr(it, p):
    n = max(2, p["warmup_num_steps"])
    if it < 0:
        return p["warmup_min_lr"]
    if it < n:
        gamma = warmup_gamma(it, n, p["warmup_type"])
    else:
        total = p["total_num_steps"]
        gamma = max(0.0, float(total - it) / float(max(1.0, total - n)))
    return p["warmup_min_lr"] + (p["warmup_max_lr"] - p["warmup_min_lr"]) * gamma


def warmup_cosine_lr(it, p, base_lr):
    n = max(2, p["warmup_num_steps"])
    if it < 0:
        return 0.0
    if it < n:
        ratio = warmup_gamma(it, n, p["warmup_type"])
        ratio = p["warmup_min_ratio"] + ratio * (1.0 - p["warmup_min_ratio"])
    else:
        real_last = it - n + 1
        real_total = max(1, p["total_num_steps"] - n)
        progress = min(1.0, real_last / real_total)
        ratio = (1 + math.cos(math.pi * progress)) / 2
        ratio = max(0.0, p["cos_min_ratio"] + (1.0 - p["cos_min_ratio"]) * ratio)
    return base_lr * ratio


def one_cycle(it, p):
    """(lr, beta1) at iteration it; beta2 is DeepSpeed's fixed 0.99."""
    first = float(p["cycle_first_step_size"])
    second = float(p["cycle_second_step_size"]) if p.get("cycle_second_step_size") is not None else first
    total = first + second
    step_ratio = first / total
    first_stairs = p.get("cycle_first_stair_count", 0)
    second_stairs = p.get("cycle_second_stair_count")
    second_stairs = first_stairs if second_stairs is None else second_stairs
    decay_step = p.get("decay_step_size", 0)
    skip_lr = math.isclose(decay_step, 0) or math.isclose(p.get("decay_lr_rate", 0.0), 0)
    skip_mom = math.isclose(decay_step, 0) or math.isclose(p.get("decay_mom_rate", 0.0), 0)
    min_lr, max_lr = p["cycle_min_lr"], p["cycle_max_lr"]
    min_mom, max_mom = p.get("cycle_min_mom", 0.8), p.get("cycle_max_mom", 0.9)
    if it < 0:
        return min_lr, min_mom
    if it < total:
        b = it + 1
        cycle = math.floor(1 + b / total)
        x = 1. + b / total - cycle
        if x <= step_ratio:
            scale, stairs = x / step_ratio, first_stairs
        else:
            scale, stairs = (x - 1) / (step_ratio - 1), second_stairs
        if stairs > 0:
            ci = b % total
            pos = ci * stairs / first if ci <= first else (total - ci) * stairs / second
            scale = math.floor(pos) / stairs
        return min_lr + (max_lr - min_lr) * scale, max_mom - (max_mom - min_mom) * scale
    d = it - total + 1
    lr = min_lr if skip_lr else min_lr / (1 + p["decay_lr_rate"] * (d / decay_step))
    mom = max_mom if skip_mom else max_mom * (1 + p["decay_mom_rate"] * (d / decay_step))
    return lr, mom


def lr_range_test(it, p):
    interval = float(it + 1) / p["lr_range_test_step_size"]
    if p.get("lr_range_test_staircase", False):
        interval = math.floor(interval)
    return p["lr_range_test_min_lr"] * (1 + p["lr_range_test_step_rate"] * interval)


def hf(it, kind, p, base_lr):
    step = it + 1
    w, total = p.get("warmup_steps", 0), p.get("total_steps", 0)
    if step < w:
        return base_lr * step / max(1, w)
    if kind == "constant":
        return base_lr
    if kind == "linear":
        return base_lr * max(0.0, float(total - step) / float(max(1, total - w)))
    progress = float(step - w) / float(max(1, total - w))
    floor = p.get("min_lr_ratio", 0.0)
    wave = 0.5 * (1.0 + math.cos(math.pi * float(p.get("num_cycles", 0.5)) * 2.0 * progress))
    return base_lr * max(0.0, wave * (1 - floor) + floor)


BASE_LR = 0.003
CASES = [
    ("WarmupLR", {"warmup_min_lr": 1e-5, "warmup_max_lr": 2e-3, "warmup_num_steps": 10, "warmup_type": "log"},
     [-1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 15, 20, 50, 100, 1000, 12345]),
    ("WarmupLR", {"warmup_min_lr": 0.0, "warmup_max_lr": 1e-3, "warmup_num_steps": 8, "warmup_type": "linear"},
     [-1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 16, 20, 30, 99, 1000]),
    ("WarmupLR", {"warmup_num_steps": 1},
     [-1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 100]),
    ("WarmupDecayLR", {"total_num_steps": 30, "warmup_min_lr": 1e-4, "warmup_max_lr": 1e-3,
                       "warmup_num_steps": 10, "warmup_type": "linear"},
     [-1, 0, 1, 5, 8, 9, 10, 11, 12, 15, 20, 25, 28, 29, 30, 31, 32, 40, 100, 1000]),
    ("WarmupDecayLR", {"total_num_steps": 20, "warmup_num_steps": 5},
     [-1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 15, 17, 18, 19, 20, 21, 25, 50]),
    ("WarmupCosineLR", {"total_num_steps": 40, "warmup_min_ratio": 0.1, "warmup_num_steps": 10,
                        "cos_min_ratio": 0.01, "warmup_type": "linear"},
     [-1, 0, 1, 5, 9, 10, 11, 15, 20, 25, 30, 35, 38, 39, 40, 41, 45, 50, 100, 400]),
    ("WarmupCosineLR", {"total_num_steps": 25, "warmup_num_steps": 6},
     [-1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 15, 20, 23, 24, 25, 26, 30, 60]),
    ("OneCycle", {"cycle_min_lr": 1e-4, "cycle_max_lr": 1e-2, "cycle_first_step_size": 10,
                  "decay_lr_rate": 0.5, "decay_step_size": 4, "cycle_min_mom": 0.85,
                  "cycle_max_mom": 0.95, "decay_mom_rate": 0.01},
     [-1, 0, 1, 4, 8, 9, 10, 11, 12, 15, 18, 19, 20, 21, 22, 23, 24, 28, 40, 100]),
    ("OneCycle", {"cycle_min_lr": 1e-3, "cycle_max_lr": 5e-3, "cycle_first_step_size": 6,
                  "cycle_second_step_size": 9, "cycle_first_stair_count": 3, "cycle_second_stair_count": 4},
     [-1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 20, 50]),
    ("OneCycle", {"cycle_min_lr": 2e-4, "cycle_max_lr": 2e-3, "cycle_first_step_size": 7,
                  "cycle_momentum": False},
     [-1, 0, 1, 2, 3, 5, 6, 7, 8, 10, 12, 13, 14, 15, 16, 17, 20, 30, 40, 70]),
    ("LRRangeTest", {"lr_range_test_min_lr": 1e-4, "lr_range_test_step_size": 5,
                     "lr_range_test_step_rate": 2.0, "lr_range_test_staircase": False},
     [-1, 0, 1, 2, 3, 4, 5, 6, 9, 10, 11, 14, 15, 19, 20, 24, 25, 50, 99, 1000]),
    ("LRRangeTest", {"lr_range_test_min_lr": 1e-3, "lr_range_test_step_size": 4,
                     "lr_range_test_step_rate": 0.5, "lr_range_test_staircase": True},
     [-1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12, 15, 16, 19, 20, 23, 24, 100]),
    ("linear", {"warmup_steps": 5, "total_steps": 20},
     [-1, 0, 1, 2, 3, 4, 5, 6, 8, 10, 12, 15, 17, 18, 19, 20, 21, 25, 30, 100]),
    ("cosine_with_min_lr", {"warmup_steps": 4, "total_steps": 24, "min_lr_ratio": 0.1},
     [-1, 0, 1, 2, 3, 4, 5, 6, 8, 10, 13, 16, 19, 21, 22, 23, 24, 25, 30, 50]),
    ("constant_with_warmup", {"warmup_steps": 3},
     [-1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18]),
]


def evaluate(kind, p, it):
    if kind == "WarmupLR":
        return warmup_lr(it, {"warmup_min_lr": 0.0, "warmup_max_lr": 0.001, "warmup_type": "log", **p}), None
    if kind == "WarmupDecayLR":
        return warmup_decay_lr(it, {"warmup_min_lr": 0.0, "warmup_max_lr": 0.001, "warmup_type": "log", **p}), None
    if kind == "WarmupCosineLR":
        q = {"warmup_min_ratio": 0.0, "cos_min_ratio": 0.0001, "warmup_type": "log", **p}
        return warmup_cosine_lr(it, q, BASE_LR), None
    if kind == "OneCycle":
        lr, mom = one_cycle(it, p)
        return lr, (mom if p.get("cycle_momentum", True) else None)
    if kind == "LRRangeTest":
        return lr_range_test(it, p), None
    return hf(it, kind.replace("_with_warmup", "").replace("_with_min_lr", ""), p, BASE_LR), None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="tests/fixtures/optim/scheduler_reference.json")
    args = ap.parse_args()
    cases = []
    for kind, params, its in CASES:
        assert len(its) == 20
        samples = []
        for it in its:
            lr, mom = evaluate(kind, params, it)
            s = {"iteration": it, "lr": lr}
            if mom is not None:
                s["beta1"] = mom
            samples.append(s)
        cases.append({"type": kind, "params": params, "samples": samples})
    doc = {"generator": "tools/reference/make_scheduler_reference.py", "base_lr": BASE_LR, "cases": cases}
    with open(args.out, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
