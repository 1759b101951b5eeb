#!/usr/bin/env python3
"""Writes torch.optim.AdamW trajectories (PyTorch on the CPU, float32, single-tensor path) to a
small JSON file that tests/kernels/test_adamw_torch.cpp replays through zerotrain's AdamW.

Hyper-parameters are exactly representable in float32, so that torch (which holds them as Python
floats) and zerotrain's AdamWParams (float) start from identical values.

Run: python3 tools/gen_adamw_reference.py [--out tests/data/adamw_torch_reference.json]
"""
import argparse
import json

import torch

CASES = [
    # name, lr, beta1, beta2, eps, weight_decay
    ("defaults_like", 2.0**-10, 0.875, 1 - 2.0**-10, 2.0**-27, 2.0**-6),
    ("large_eps_and_decay", 2.0**-5, 0.75, 0.9375, 2.0**-10, 0.125),
    ("no_decay", 2.0**-7, 0.9375, 0.998046875, 2.0**-20, 0.0),
]
NUMEL = 13
STEPS = 20


def f32_list(t):
    return [float(x) for x in t.to(torch.float32).tolist()]


def trajectory(name, lr, beta1, beta2, eps, weight_decay, gen):
    param = torch.randn(NUMEL, generator=gen, dtype=torch.float32)
    start = param.clone()
    p = torch.nn.Parameter(param)
    opt = torch.optim.AdamW([p], lr=lr, betas=(beta1, beta2), eps=eps,
                            weight_decay=weight_decay, foreach=False)
    grads, params = [], []
    for _ in range(STEPS):
        g = torch.randn(NUMEL, generator=gen, dtype=torch.float32)
        p.grad = g.clone()
        opt.step()
        grads.append(f32_list(g))
        params.append(f32_list(p.detach()))
    state = opt.state[p]
    return {
        "name": name, "lr": lr, "beta1": beta1, "beta2": beta2, "eps": eps,
        "weight_decay": weight_decay, "param0": f32_list(start), "grads": grads,
        "params": params, "exp_avg": f32_list(state["exp_avg"]),
        "exp_avg_sq": f32_list(state["exp_avg_sq"]),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="tests/data/adamw_torch_reference.json")
    args = ap.parse_args()
    gen = torch.Generator().manual_seed(20261121)
    doc = {
        "generator": "tools/gen_adamw_reference.py",
        "torch_version": torch.__version__,
        "cases": [trajectory(*c, gen) for c in CASES],
    }
    with open(args.out, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
