#!/usr/bin/env python3
"""Writes optimizer trajectories to tests/fixtures/optim/optimizer_reference.json, replayed by
tests/optim/test_optimizers_torch.cpp through zerotrain's optim/ step functions.

Adam, AdamW and SGD are torch.optim's own (CPU, float32, single-tensor path, foreach=False),
Adam and AdamW also with amsgrad (the final state then has max_exp_avg_sq).
torch 1.13 has neither Lion nor LAMB, so this script implements those two itself with float32
torch ops, step by step as documented in src/zerotrain/optim/optimizers.h:
  Lion: the update of Chen et al. 2023 ("Symbolic Discovery of Optimization Algorithms",
        Algorithm 2, as the authors' lion-pytorch implements it: decoupled decay, sign of the
        beta1 interpolation, then the beta2 moment update).
  LAMB: DeepSpeed FusedLamb's formula (csrc/lamb/fused_lamb_cuda_kernel.cu): bias-corrected
        moments, u = m_hat / (sqrt(v_hat) + eps) + wd p (eps inside the sqrt on request), the
        per-tensor trust ratio |p| / |u| clamped to [min_coeff, max_coeff] (1 when a norm is 0),
        p -= lr * ratio * u.

Each case has three tensors (sizes SIZES, the middle one in a no-weight-decay group, as a bias
would be) and STEPS updates. Starting values and gradients come from a splitmix64 stream that the
C++ test regenerates (value(case, step, tensor, i): top 24 bits of splitmix64(key) mapped to
[-1, 1), exact in float32; step 0 gives the starting params), so the file holds only the recorded
params at CHECKPOINTS and the final state. Hyper-parameters are exactly representable in float32,
so torch's double scalars and zerotrain's floats agree.

Run: python3 tools/reference/make_optimizer_reference.py [--out tests/fixtures/optim/optimizer_reference.json]
"""
import argparse
import json

import torch

SIZES = [37, 16, 29]
STEPS = 50
CHECKPOINTS = [1, 2, 10, 50]
MASK = (1 << 64) - 1

CASES = [
    # name, optimizer, hyper-parameters, weight decay of the decay group, grad_scale
    ("adamw_decay", "adamw", dict(lr=2.0**-10, beta1=0.875, beta2=1 - 2.0**-10, eps=2.0**-27), 2.0**-4, 1.0),
    ("adamw_scaled_grads", "adamw", dict(lr=2.0**-7, beta1=0.9375, beta2=0.998046875, eps=2.0**-20), 2.0**-3, 0.5),
    ("adam_l2", "adam", dict(lr=2.0**-9, beta1=0.875, beta2=0.9990234375, eps=2.0**-24), 2.0**-5, 1.0),
    ("adam_no_decay", "adam", dict(lr=2.0**-6, beta1=0.75, beta2=0.9375, eps=2.0**-10), 0.0, 1.0),
    ("sgd_plain_decay", "sgd", dict(lr=2.0**-5, momentum=0.0, dampening=0.0, nesterov=False), 2.0**-4, 1.0),
    ("sgd_momentum_dampening", "sgd", dict(lr=2.0**-6, momentum=0.875, dampening=0.25, nesterov=False), 2.0**-6, 1.0),
    ("sgd_nesterov", "sgd", dict(lr=2.0**-6, momentum=0.9375, dampening=0.0, nesterov=True), 2.0**-5, 1.0),
    ("lion_decay", "lion", dict(lr=2.0**-12, beta1=0.875, beta2=0.9921875), 2.0**-3, 1.0),
    ("lion_scaled", "lion", dict(lr=2.0**-10, beta1=0.9375, beta2=0.984375), 0.0, 0.25),
    ("lamb_default_like", "lamb", dict(lr=2.0**-8, beta1=0.875, beta2=0.9990234375, eps=2.0**-20,
                                        eps_inside_sqrt=False, max_coeff=10.0, min_coeff=0.01), 2.0**-6, 1.0),
    ("lamb_clamped_eps_inside", "lamb", dict(lr=2.0**-7, beta1=0.9375, beta2=0.9375, eps=2.0**-12,
                                              eps_inside_sqrt=True, max_coeff=0.5, min_coeff=0.25), 2.0**-3, 1.0),
    # amsgrad: a small beta2 lets v fall below its running max often.
    ("adam_amsgrad", "adam", dict(lr=2.0**-7, beta1=0.875, beta2=0.875, eps=2.0**-16, amsgrad=True), 2.0**-5, 1.0),
    ("adamw_amsgrad_scaled", "adamw", dict(lr=2.0**-8, beta1=0.75, beta2=0.9375, eps=2.0**-20, amsgrad=True), 2.0**-4, 0.5),
]


def splitmix64(x):
    z = (x + 0x9E3779B97F4A7C15) & MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


def values(case, step, tensor, n):
    out = []
    for i in range(n):
        key = ((((case * 64 + step) * 8 + tensor) << 16) + i) & MASK
        out.append((splitmix64(key) >> 40) / 2.0**23 - 1.0)
    return torch.tensor(out, dtype=torch.float32)


def f32_list(t):
    return [float(x) for x in t.detach().to(torch.float32).reshape(-1).tolist()]


class Lion:
    def __init__(self, groups, lr, beta1, beta2):
        self.groups, self.lr, self.b1, self.b2 = groups, lr, beta1, beta2
        self.m = {id(p): torch.zeros_like(p) for g in groups for p in g["params"]}

    @torch.no_grad()
    def step(self):
        for g in self.groups:
            for p in g["params"]:
                m = self.m[id(p)]
                p.mul_(1 - self.lr * g["weight_decay"])
                update = (m * self.b1).add_(p.grad, alpha=1 - self.b1)
                p.add_(torch.sign(update), alpha=-self.lr)
                m.mul_(self.b2).add_(p.grad, alpha=1 - self.b2)

    def state(self, p):
        return {"exp_avg": self.m[id(p)]}


class Lamb:
    def __init__(self, groups, lr, beta1, beta2, eps, eps_inside_sqrt, max_coeff, min_coeff):
        self.groups, self.lr, self.b1, self.b2, self.eps = groups, lr, beta1, beta2, eps
        self.inside, self.max_coeff, self.min_coeff = eps_inside_sqrt, max_coeff, min_coeff
        self.m = {id(p): torch.zeros_like(p) for g in groups for p in g["params"]}
        self.v = {id(p): torch.zeros_like(p) for g in groups for p in g["params"]}
        self.t = 0

    @torch.no_grad()
    def step(self):
        self.t += 1
        bc1 = torch.tensor(1 - self.b1**self.t, dtype=torch.float32)
        bc2 = torch.tensor(1 - self.b2**self.t, dtype=torch.float32)
        for g in self.groups:
            for p in g["params"]:
                m, v = self.m[id(p)], self.v[id(p)]
                m.mul_(self.b1).add_(p.grad, alpha=1 - self.b1)
                v.mul_(self.b2).add_(p.grad * p.grad, alpha=1 - self.b2)
                v_hat = v / bc2
                denom = torch.sqrt(v_hat + self.eps) if self.inside else torch.sqrt(v_hat) + self.eps
                u = (m / bc1) / denom + g["weight_decay"] * p
                w_norm = float(torch.linalg.norm(p.double()))
                u_norm = float(torch.linalg.norm(u.double()))
                coeff = 1.0
                if w_norm != 0 and u_norm != 0:
                    coeff = min(max(w_norm / u_norm, self.min_coeff), self.max_coeff)
                p.sub_(u * torch.tensor(self.lr * coeff, dtype=torch.float32))

    def state(self, p):
        return {"exp_avg": self.m[id(p)], "exp_avg_sq": self.v[id(p)]}


def make_optimizer(kind, hp, groups):
    if kind in ("adam", "adamw"):
        cls = torch.optim.AdamW if kind == "adamw" else torch.optim.Adam
        return cls(groups, lr=hp["lr"], betas=(hp["beta1"], hp["beta2"]), eps=hp["eps"],
                   amsgrad=hp.get("amsgrad", False), foreach=False)
    if kind == "sgd":
        return torch.optim.SGD(groups, lr=hp["lr"], momentum=hp["momentum"],
                               dampening=hp["dampening"], nesterov=hp["nesterov"], foreach=False)
    if kind == "lion":
        return Lion(groups, **hp)
    return Lamb(groups, **hp)


def state_of(opt, kind, p):
    if kind in ("adam", "adamw"):
        s = opt.state[p]
        out = {"exp_avg": s["exp_avg"], "exp_avg_sq": s["exp_avg_sq"]}
        if "max_exp_avg_sq" in s:
            out["max_exp_avg_sq"] = s["max_exp_avg_sq"]
        return out
    if kind == "sgd":
        buf = opt.state[p].get("momentum_buffer")
        return {} if buf is None else {"momentum_buffer": buf}
    return opt.state(p)


def run_case(index, name, kind, hp, wd, grad_scale):
    params = [torch.nn.Parameter(values(index, 0, t, n)) for t, n in enumerate(SIZES)]
    groups = [{"params": [params[0], params[2]], "weight_decay": wd},
              {"params": [params[1]], "weight_decay": 0.0}]
    opt = make_optimizer(kind, hp, groups)
    checkpoints = {}
    for step in range(1, STEPS + 1):
        for t, p in enumerate(params):
            # The C++ side passes the raw gradient and grad_scale; torch sees the product (exact).
            p.grad = values(index, step, t, SIZES[t]) * grad_scale
        opt.step()
        if step in CHECKPOINTS:
            checkpoints[str(step)] = [f32_list(p) for p in params]
    final_state = {}
    for p in params:
        for k, v in state_of(opt, kind, p).items():
            final_state.setdefault(k, []).append(f32_list(v))
    return {"name": name, "optimizer": kind, "case_index": index, "hyper": hp,
            "weight_decay": wd, "grad_scale": grad_scale, "params": checkpoints,
            "final_state": final_state}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="tests/fixtures/optim/optimizer_reference.json")
    args = ap.parse_args()
    torch.set_num_threads(1)
    doc = {"generator": "tools/reference/make_optimizer_reference.py",
           "torch_version": torch.__version__, "sizes": SIZES, "steps": STEPS,
           "cases": [run_case(i, *c) for i, c in enumerate(CASES)]}
    with open(args.out, "w") as f:
        json.dump(doc, f, separators=(",", ":"))
        f.write("\n")


if __name__ == "__main__":
    main()
