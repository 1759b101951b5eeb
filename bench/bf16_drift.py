#!/usr/bin/env python3
"""How far a bf16 run drifts from the f32 run on the same batch: zerotrain beside PyTorch (issue 32).

For each family of bench/drift_models.py (llama GQA 3:1, qwen2 MQA with q/k/v biases, mistral
with a sliding window, gpt2; head_dim 64) and each seed, one random model and one fixed batch
(--batch x --seq tokens, the same every step) train --steps steps (AdamW, constant --lr, no weight
decay, clipping at --clip):
  - zerotrain (`zerotrain train --model DIR`, the same weights) with --dtype f32 and --dtype bf16
    (f32 masters), for each attention path: on CUDA the default (cuDNN) and ZT_ATTENTION=native,
    on the CPU its one path;
  - PyTorch in the same call: f32; bf16 autocast over f32 weights; and DeepSpeed's bf16
    arrangement (bf16 parameters and gradients, an f32 master copy that clipping and AdamW step,
    copied back to bf16 after each step).
Drift of a bf16 run = the largest relative loss difference over the steps from the f32 run of the
same framework (and, for zerotrain, of the same path). Sanity column: zerotrain f32 against torch
f32, at the first step (~1e-7 on the CPU) and over all steps (larger: a fixed batch memorised at
this learning rate amplifies f32 rounding, ~1e-4 by step 20; still far below the bf16 drifts).
Each figure is the median over the seeds; the verdict of a case is "zerotrain drift <= DeepSpeed
arrangement's drift". Prints a table, writes --json.

  python3 bench/bf16_drift.py --zerotrain build/bin/zerotrain --device cpu --json drift.json
  tools/device_run_drift.sh                      # on the GPU machine (cuDNN and native paths)
"""
import argparse
import concurrent.futures
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time

import torch

BENCH = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, BENCH)
import drift_models  # noqa: E402
from drift_models import CONFIGS, init_params, save_model  # noqa: E402
from finetune_vs_trainer import gpu_name, metrics, sh  # noqa: E402
from fixtures import token_file  # noqa: E402  (tests/bad_inputs, put on the path by drift_models)

TORCH_MODES = ("f32", "autocast", "ds")  # ds: DeepSpeed's bf16 arrangement


def fixed_batch(seed, batch, seq, vocab):
    """batch x (seq + 1) random tokens; (token file bytes, inputs [B, S], targets [B, S]).
    zerotrain's windows of seq + 1 tokens step by seq: the file holds exactly one batch of them."""
    rng = random.Random(seed)
    tokens = [rng.randrange(vocab) for _ in range(batch * seq + 1)]
    t = torch.tensor(tokens, dtype=torch.int64)
    inputs = torch.stack([t[r * seq:(r + 1) * seq] for r in range(batch)])
    targets = torch.stack([t[r * seq + 1:(r + 1) * seq + 1] for r in range(batch)])
    return token_file(tokens, vocab_size=vocab), inputs, targets


def torch_losses(config, params0, inputs, targets, mode, a):
    """The losses of --steps AdamW steps in PyTorch; mode f32, autocast or ds."""
    dev = torch.device(a.device)
    inputs, targets = inputs.to(dev), targets.to(dev)
    master = {n: t.detach().clone().to(dev).requires_grad_(mode != "ds") for n, t in params0.items()}
    model = master if mode != "ds" else {
        n: t.detach().to(torch.bfloat16).requires_grad_() for n, t in master.items()}
    opt = torch.optim.AdamW(master.values(), lr=a.lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0)
    out = []
    for _ in range(a.steps):
        if mode == "autocast":
            with torch.autocast(device_type=dev.type, dtype=torch.bfloat16):
                loss = drift_models.loss(config, model, inputs, targets)
        else:
            loss = drift_models.loss(config, model, inputs, targets)
        out.append(loss.item())
        loss.backward()
        if mode == "ds":  # bf16 gradients into the f32 masters' gradients
            for n, t in model.items():
                master[n].grad = t.grad.float()
                t.grad = None
        torch.nn.utils.clip_grad_norm_(list(master.values()), a.clip)
        opt.step()
        opt.zero_grad(set_to_none=True)
        if mode == "ds":
            with torch.no_grad():
                for n, t in model.items():
                    t.copy_(master[n])
    return out


def zerotrain_losses(model_dir, tokens, out, dtype, path, a):
    env = dict(os.environ)
    env.pop("ZT_ATTENTION", None)
    if path == "native":
        env["ZT_ATTENTION"] = "native"
    sh([a.zerotrain, "train", "--model", model_dir, "--init", "pretrained", "--data", tokens,
        "--out", out, "--device", a.device, "--dtype", dtype, "--steps", a.steps,
        "--micro-batch", a.batch, "--seq-len", a.seq, "--lr", a.lr, "--schedule", "constant",
        "--warmup", 0, "--weight-decay", 0.0, "--beta1", 0.9, "--beta2", 0.999, "--eps", 1e-8,
        "--clip", a.clip, "--log-every", 1, "--sample-tokens", 0], log=out + ".log", env=env)
    train, _ = metrics(out)
    return [r["loss"] for r in train]


def drift(run, reference):
    """The largest relative difference of a loss curve from the reference curve."""
    assert len(run) == len(reference), (len(run), len(reference))
    return max(abs(x - y) / abs(y) for x, y in zip(run, reference))


def one_seed(family, seed, paths, work, a, log):
    """Every run of one family and seed: {"torch": {mode: losses}, "zerotrain": {path: {dtype:
    losses}}, "figures": {path: {...}}}."""
    config = CONFIGS[family]
    params = init_params(config, seed)
    case = os.path.join(work, f"{family}-{seed}")
    save_model(config, params, os.path.join(case, "model"))
    data, inputs, targets = fixed_batch(seed, a.batch, a.seq, config["vocab_size"])
    tokens = os.path.join(case, "tokens.bin")
    with open(tokens, "wb") as f:
        f.write(data)
    r = {"torch": {}, "zerotrain": {}, "figures": {}}

    def zerotrain_run(path, dtype):
        t0 = time.time()
        losses = zerotrain_losses(os.path.join(case, "model"), tokens,
                                  os.path.join(case, f"zt-{path}-{dtype}"), dtype, path, a)
        log(f"  {family} seed {seed} zerotrain {path} {dtype}: loss {losses[0]:.5f} -> "
            f"{losses[-1]:.5f} ({time.time() - t0:.1f} s)")
        return losses

    # zerotrain's runs are processes of their own: with --jobs > 1 they overlap each other and the
    # PyTorch runs here (small models leave a GPU mostly idle; each run's numbers are its own).
    with concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs) as pool:
        pending = {(path, dtype): pool.submit(zerotrain_run, path, dtype)
                   for path in paths for dtype in ("f32", "bf16")}
        for mode in TORCH_MODES:
            t0 = time.time()
            r["torch"][mode] = torch_losses(config, params, inputs, targets, mode, a)
            log(f"  {family} seed {seed} torch {mode}: loss {r['torch'][mode][0]:.5f} -> "
                f"{r['torch'][mode][-1]:.5f} ({time.time() - t0:.1f} s)")
        zt = {key: f.result() for key, f in pending.items()}
    tf32 = r["torch"]["f32"]
    for path in paths:
        runs = {dtype: zt[(path, dtype)] for dtype in ("f32", "bf16")}
        r["zerotrain"][path] = runs
        r["figures"][path] = {
            "zerotrain_f32_vs_torch_f32": drift(runs["f32"], tf32),
            "zerotrain_f32_vs_torch_f32_first_step": abs(runs["f32"][0] - tf32[0]) / abs(tf32[0]),
            "zerotrain_bf16_first_step_vs_f32": abs(runs["bf16"][0] - runs["f32"][0]) / abs(runs["f32"][0]),
            "zerotrain_drift": drift(runs["bf16"], runs["f32"]),
            "ds_arrangement_drift": drift(r["torch"]["ds"], tf32),
            "autocast_drift": drift(r["torch"]["autocast"], tf32),
        }
    return r


def summarize(per_seed, paths):
    out = {}
    for path in paths:
        keys = per_seed[0]["figures"][path].keys()
        med = {k: statistics.median(s["figures"][path][k] for s in per_seed) for k in keys}
        out[path] = dict(median=med, verdict=med["zerotrain_drift"] <= med["ds_arrangement_drift"])
    return out


def table(result):
    head = (f"{'family':<9}{'path':<8}{'zt f32 vs torch f32 (step 1 / max)':>36}{'zerotrain bf16':>16}"
            f"{'DS arrangement':>16}{'autocast':>10}  zerotrain <= DS")
    lines = [head, "-" * len(head)]
    for fam, fr in result["families"].items():
        for path, pr in fr["paths"].items():
            m = pr["median"]
            sanity = f"{m['zerotrain_f32_vs_torch_f32_first_step']:.1e} / {m['zerotrain_f32_vs_torch_f32']:.1e}"
            lines.append(f"{fam:<9}{path:<8}{sanity:>36}"
                         f"{m['zerotrain_drift']:>16.3%}{m['ds_arrangement_drift']:>16.3%}"
                         f"{m['autocast_drift']:>10.3%}  {'yes' if pr['verdict'] else 'NO'}")
    return "\n".join(lines)


def machine(device):
    if device.startswith("cuda"):
        return {"gpu": gpu_name("cuda") or torch.cuda.get_device_name(0), "host": platform.node()}
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")),
               platform.processor())
    return {"cpu": cpu, "cores": os.cpu_count(), "host": platform.node()}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--zerotrain", required=True, help="the zerotrain binary")
    p.add_argument("--device", default="cuda", help="cpu or cuda (both frameworks)")
    p.add_argument("--families", default=",".join(CONFIGS))
    p.add_argument("--seeds", type=int, default=3, help="seeds 1..N: weights and batch; figures are medians")
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--batch", type=int, default=4)
    p.add_argument("--seq", type=int, default=128)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--clip", type=float, default=1.0)
    p.add_argument("--paths", default=None, help="attention paths (default: cudnn,native on CUDA, cpu on the CPU)")
    p.add_argument("--jobs", type=int, default=1,
                   help="zerotrain runs at a time, beside the PyTorch runs (a GPU: 4; shared CPU cores: 1)")
    p.add_argument("--commit", default="unknown")
    p.add_argument("--work", default=None, help="keep the runs here (default: a temporary directory)")
    p.add_argument("--json", required=True)
    a = p.parse_args()
    paths = a.paths.split(",") if a.paths else (["cudnn", "native"] if a.device.startswith("cuda") else ["cpu"])
    families = a.families.split(",")
    t_start = time.time()

    def log(msg):
        print(f"[drift {time.time() - t_start:6.1f}s] {msg}", flush=True)

    result = {
        "what": "bf16 drift from f32 over a fixed batch: zerotrain vs PyTorch f32 / autocast / "
                "DeepSpeed's bf16 arrangement (issue 32)",
        "command": " ".join(sys.argv), "commit": a.commit, "device": a.device, "machine": machine(a.device),
        "torch": torch.__version__,
        "torch_attention": "sdpa" if hasattr(torch.nn.functional, "scaled_dot_product_attention") else "eager",
        "settings": {"steps": a.steps, "batch": a.batch, "seq": a.seq, "lr": a.lr, "clip": a.clip,
                     "weight_decay": 0.0, "betas": [0.9, 0.999], "eps": 1e-8, "schedule": "constant",
                     "seeds": list(range(1, a.seeds + 1)), "paths": paths, "jobs": a.jobs},
        "drift_definition": "max over steps of |loss_bf16 - loss_f32| / |loss_f32|, same framework "
                            "(zerotrain: same attention path); figures are medians over the seeds",
        "families": {},
    }
    with tempfile.TemporaryDirectory() as tmp:
        work = a.work or tmp
        for fam in families:
            log(f"{fam}: {json.dumps({k: v for k, v in CONFIGS[fam].items() if k not in ('architectures',)})}")
            per_seed = [dict(seed=s, **one_seed(fam, s, paths, work, a, log)) for s in range(1, a.seeds + 1)]
            result["families"][fam] = {"config": CONFIGS[fam], "paths": summarize(per_seed, paths),
                                       "per_seed": per_seed}
            for path, pr in result["families"][fam]["paths"].items():
                log(f"{fam} {path}: " + ", ".join(f"{k} {v:.3e}" for k, v in pr["median"].items()))
            with open(a.json, "w") as f:  # after each family, so that a run cut short keeps what it did
                json.dump(dict(result, complete=False), f, indent=1)
    result["verdict"] = {
        "rule": "zerotrain drift <= DeepSpeed arrangement's drift, every family and path (medians)",
        "holds": all(pr["verdict"] for fr in result["families"].values() for pr in fr["paths"].values()),
        "failing": [f"{fam}/{path}" for fam, fr in result["families"].items()
                    for path, pr in fr["paths"].items() if not pr["verdict"]],
    }
    result["table"] = table(result)
    result["wall_s"] = round(time.time() - t_start, 1)
    result["complete"] = True
    print(result["table"])
    print(f"verdict: zerotrain drift <= DeepSpeed arrangement's in every case: {result['verdict']['holds']}"
          + (f" (not: {', '.join(result['verdict']['failing'])})" if result["verdict"]["failing"] else ""))
    with open(a.json, "w") as f:
        json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
