#!/usr/bin/env python3
"""Parity of zerotrain with PyTorch / Hugging Face transformers (the core proof of issue 3).

For small random models of the llama, mistral, qwen2 and gpt2 families (fp32), with the same weights
and tokens on both sides, compares
  - logits at step 0                         (max relative error < 1e-4)
  - every parameter gradient at step 0       (max relative error < 1e-3)
  - the losses of 20 AdamW steps             (relative error < 1e-4 each); for the variant cases
    (VARIANTS) torch.optim.Adam with L2 weight decay and amsgrad instead
  - the model zerotrain saves after training, loaded back with AutoModelForCausalLM: same logits as
    zerotrain's own final forward (< 1e-4)
and writes a JSON report. Needs torch + transformers + safetensors (present on the GPU machine; CI
runs it on the CPU through scripts/parity_cpu.sh).

  python3 tools/parity/parity.py --runner build/bin/parity_runner --device cuda --out report.json
"""
import argparse, json, os, subprocess, sys, tempfile

import torch
from safetensors.torch import load_file, save_file
from transformers import AutoConfig, AutoModelForCausalLM

B, S, STEPS, LR, WD = 2, 32, 20, 1e-3, 0.1
VOCAB = 256

FAMILIES = {
    # Head dims of 32: the CUDA attention kernels are built for 32, 64, 80, 96 and 128.
    "llama": dict(model_type="llama", hidden_size=128, intermediate_size=160, num_hidden_layers=2,
                  num_attention_heads=4, num_key_value_heads=2, vocab_size=VOCAB, max_position_embeddings=128,
                  rms_norm_eps=1e-5, rope_theta=500000.0, tie_word_embeddings=False,
                  rope_scaling={"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                                "high_freq_factor": 4.0, "original_max_position_embeddings": 16}),
    "llama-tied": dict(model_type="llama", hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                       num_attention_heads=2, num_key_value_heads=2, vocab_size=VOCAB, max_position_embeddings=128,
                       rms_norm_eps=1e-6, rope_theta=10000.0, tie_word_embeddings=True),
    "mistral": dict(model_type="mistral", hidden_size=128, intermediate_size=128, num_hidden_layers=2,
                    num_attention_heads=4, num_key_value_heads=1, vocab_size=VOCAB, max_position_embeddings=128,
                    rms_norm_eps=1e-5, rope_theta=10000.0, sliding_window=8, tie_word_embeddings=False),
    "qwen2": dict(model_type="qwen2", hidden_size=128, intermediate_size=128, num_hidden_layers=2,
                  num_attention_heads=4, num_key_value_heads=2, vocab_size=VOCAB, max_position_embeddings=128,
                  rms_norm_eps=1e-6, rope_theta=1000000.0, tie_word_embeddings=True, use_sliding_window=False),
    "gpt2": dict(model_type="gpt2", n_embd=128, n_layer=2, n_head=4, vocab_size=VOCAB, n_positions=128,
                 bos_token_id=0, eos_token_id=0,
                 resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0, activation_function="gelu_new"),
}


def max_rel(a, b):
    """max |a - b| / max |b| (relative to the reference's scale)."""
    a, b = a.double(), b.double()
    return ((a - b).abs().max() / b.abs().max().clamp_min(1e-30)).item()


def batches(seed):
    g = torch.Generator().manual_seed(seed)
    out = []
    for _ in range(STEPS + 1):
        ids = torch.randint(0, VOCAB, (B, S), generator=g)
        out.append(ids)
    return out


# Optimizer variants, each on one small family: name -> (family, runner flags). The runner's
# --weight-decay-mode l2 --amsgrad is torch.optim.Adam(weight_decay=WD, amsgrad=True).
VARIANTS = {"llama-tied-adam-l2-amsgrad": ("llama-tied", ["--weight-decay-mode", "l2", "--amsgrad"])}


def torch_optimizer(params, variant_flags):
    if variant_flags:
        return torch.optim.Adam(params, lr=LR, betas=(0.9, 0.999), eps=1e-8, weight_decay=WD, amsgrad=True)
    return torch.optim.AdamW(params, lr=LR, betas=(0.9, 0.999), eps=1e-8, weight_decay=WD)


def torch_reference(model_dir, ids_list, variant_flags):
    model = AutoModelForCausalLM.from_pretrained(model_dir, torch_dtype=torch.float32, attn_implementation="eager")
    model.train()
    out = model(input_ids=ids_list[0], labels=ids_list[0])
    logits0 = out.logits.detach().clone()
    out.loss.backward()
    grads0 = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
    model.zero_grad(set_to_none=True)
    opt = torch_optimizer(model.parameters(), variant_flags)
    losses = []
    for t in range(STEPS):
        loss = model(input_ids=ids_list[t], labels=ids_list[t]).loss
        losses.append(loss.item())
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    model.eval()
    with torch.no_grad():
        final_logits = model(input_ids=ids_list[STEPS]).logits
    return logits0, grads0, losses, final_logits


def run_family(name, cfg_kw, runner, device, work, variant_flags=()):
    torch.manual_seed(0)
    cfg = AutoConfig.for_model(**cfg_kw)
    model = AutoModelForCausalLM.from_config(cfg, torch_dtype=torch.float32)
    with torch.no_grad():  # non-trivial norms and biases, so their gradients are tested too
        for n, p in model.named_parameters():
            if p.dim() == 1:
                p.add_(torch.randn_like(p) * 0.1)
    model_dir = os.path.join(work, name, "model")
    model.save_pretrained(model_dir, safe_serialization=True)
    ids_list = batches(1)
    # zerotrain's targets: the next token, -100 at the last position (HF shifts labels the same way).
    tensors = {}
    for t, ids in enumerate(ids_list):
        tgt = torch.full_like(ids, -100)
        tgt[:, :-1] = ids[:, 1:]
        tensors[f"input_ids.{t}"] = ids.to(torch.int64).contiguous()
        tensors[f"targets.{t}"] = tgt.to(torch.int64).contiguous()
    batch_file = os.path.join(work, name, "batches.safetensors")
    save_file(tensors, batch_file)
    out_dir = os.path.join(work, name, "zerotrain")
    cmd = [runner, "--model", model_dir, "--batches", batch_file, "--steps", str(STEPS), "--lr", str(LR),
           "--weight-decay", str(WD), "--device", device, "--out", out_dir, *variant_flags]
    subprocess.run(cmd, check=True)

    logits0, grads0, losses, final_logits = torch_reference(model_dir, ids_list, variant_flags)
    zt = load_file(os.path.join(out_dir, "step0.safetensors"))
    zt_losses = json.load(open(os.path.join(out_dir, "losses.json")))["losses"]
    grad_err = {n: max_rel(zt["grad." + n], g) for n, g in grads0.items()
                if not (cfg.tie_word_embeddings and n == "lm_head.weight")}
    loss_err = [abs(a - b) / abs(b) for a, b in zip(zt_losses, losses)]
    # The model zerotrain saved after training, read back by transformers.
    saved = AutoModelForCausalLM.from_pretrained(os.path.join(out_dir, "model"), torch_dtype=torch.float32,
                                                 attn_implementation="eager").eval()
    with torch.no_grad():
        reload_logits = saved(input_ids=ids_list[STEPS]).logits
    res = {
        "logits_max_rel": max_rel(zt["logits"], logits0),
        "grad_max_rel": max(grad_err.values()),
        "grad_worst": max(grad_err, key=grad_err.get),
        "loss_max_rel": max(loss_err),
        "losses_torch": losses,
        "losses_zerotrain": zt_losses,
        "reload_logits_max_rel_vs_zerotrain": max_rel(reload_logits, zt["final_logits"]),
        "reload_logits_max_rel_vs_torch_trained": max_rel(reload_logits, final_logits),
    }
    res["pass"] = (res["logits_max_rel"] < 1e-4 and res["grad_max_rel"] < 1e-3 and res["loss_max_rel"] < 1e-4
                   and res["reload_logits_max_rel_vs_zerotrain"] < 1e-4)
    return res


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--runner", required=True, help="path to the parity_runner binary")
    p.add_argument("--device", default="cuda", help="cpu or cuda (zerotrain side; PyTorch runs on the CPU in fp32)")
    p.add_argument("--families", default=",".join([*FAMILIES, *VARIANTS]),
                   help="families and optimizer variants (VARIANTS) to run")
    p.add_argument("--out", required=True, help="report JSON")
    p.add_argument("--commit", default="unknown")
    a = p.parse_args()
    torch.use_deterministic_algorithms(True)
    report = {"what": "zerotrain vs transformers " + __import__("transformers").__version__ +
                      " / torch " + torch.__version__ + ", fp32",
              "device": a.device, "commit": a.commit, "command": " ".join(sys.argv),
              "batch": B, "seq": S, "steps": STEPS, "lr": LR, "weight_decay": WD, "families": {}}
    with tempfile.TemporaryDirectory() as work:
        for name in a.families.split(","):
            try:
                family, flags = VARIANTS.get(name, (name, []))
                report["families"][name] = run_family(name, FAMILIES[family], a.runner, a.device, work,
                                                      flags)
            except Exception as e:  # report every family, fail at the end
                report["families"][name] = {"pass": False, "error": repr(e)}
            r = report["families"][name]
            print(f"{name:12s} pass={r['pass']} " + " ".join(f"{k}={v:.2e}" for k, v in r.items()
                                                            if isinstance(v, float)), flush=True)
    report["pass"] = all(r["pass"] for r in report["families"].values())
    with open(a.out, "w") as f:
        json.dump(report, f, indent=1)
    sys.exit(0 if report["pass"] else 1)


if __name__ == "__main__":
    main()
