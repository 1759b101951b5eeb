#!/usr/bin/env python3
"""Consolidated checkpoints load in transformers and give zerotrain's logits (issue 16 item 4).

For small random llama (untied) and gpt2 (tied) models, saved by transformers in f32: `zerotrain
train` runs a few bf16 mixed-precision steps on 2 CPU ranks at ZeRO stage 3 with
--checkpoint-weights, then `zerotrain checkpoint consolidate` writes the last checkpoint as
Hugging Face weights in f32 (the masters) and in bf16. Checked:
  - AutoModelForCausalLM.from_pretrained loads each output without missing or unexpected keys;
  - its logits on a fixed batch equal zerotrain's own forward of the same directory
    (tools/parity/parity_runner, max relative error < 1e-4 in f32, as tools/parity/parity.py);
  - the bf16 output, the checkpoint's own model/ copy and the run's <out>/model give identical
    logits (the same bytes), and the f32 masters give logits within bf16 rounding of them.
Exits non-zero naming the first failure. CI runs it on the CPU through scripts/parity_cpu.sh;
on the GPU machine `--device cuda` runs zerotrain's side there.

  python3 tools/parity/check_consolidate.py --zerotrain build/bin/zerotrain \
      --runner build/bin/parity_runner [--device cuda] [--nproc N]
"""
import argparse, os, subprocess, sys, tempfile

import torch
from safetensors.torch import load_file, save_file
from transformers import AutoConfig, AutoModelForCausalLM

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOKENIZER = os.path.join(ROOT, "assets/tokenizers/kjv-bpe-4096/tokenizer.json")
TEXT = os.path.join(ROOT, "docs/ARCHITECTURE.md")
B, S = 2, 32

CASES = {
    "llama": dict(model_type="llama", hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                  num_attention_heads=2, num_key_value_heads=1, vocab_size=4096,
                  max_position_embeddings=128, rms_norm_eps=1e-5, rope_theta=10000.0,
                  tie_word_embeddings=False),
    "gpt2": dict(model_type="gpt2", n_embd=64, n_layer=2, n_head=2, vocab_size=4096, n_positions=128,
                 bos_token_id=0, eos_token_id=0, resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0,
                 activation_function="gelu_new"),
}


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, OMP_NUM_THREADS="1"))
    if p.returncode != 0:
        sys.exit(f"[check_consolidate] {' '.join(cmd)} exited {p.returncode}:\n{p.stdout}\n{p.stderr}")
    return p.stdout


def max_rel(a, b):
    a, b = a.double(), b.double()
    return ((a - b).abs().max() / b.abs().max().clamp_min(1e-30)).item()


def hf_logits(model_dir, ids):
    # Loaded in the stored dtype and computed in f32 (transformers 5 loads "auto" by default).
    model, info = AutoModelForCausalLM.from_pretrained(model_dir, output_loading_info=True)
    model = model.float()
    bad = {k: v for k, v in info.items() if v and k in ("missing_keys", "unexpected_keys",
                                                        "mismatched_keys", "error_msgs")}
    if bad:
        raise AssertionError(f"{model_dir}: transformers reported {bad}")
    with torch.no_grad():
        return model.eval()(input_ids=ids).logits


def zerotrain_logits(runner, device, model_dir, ids, work):
    batches = os.path.join(work, "batches.safetensors")
    save_file({f"{k}.{t}": ids.clone() for k in ("input_ids", "targets") for t in (0, 1)}, batches)
    out = os.path.join(work, "runner")
    run([runner, "--model", model_dir, "--batches", batches, "--steps", "1", "--device", device,
         "--out", out])
    return load_file(os.path.join(out, "step0.safetensors"))["logits"]


def check_case(name, cfg_kw, a, tmp, tokens):
    work = os.path.join(tmp, name)
    model_dir = os.path.join(work, "init")
    torch.manual_seed(sum(map(ord, name)))
    cfg = AutoConfig.for_model(**cfg_kw, initializer_range=0.2)
    AutoModelForCausalLM.from_config(cfg, torch_dtype=torch.float32).save_pretrained(
        model_dir, safe_serialization=True)
    out = os.path.join(work, "run")
    run([a.zerotrain, "train", "--model", model_dir, "--data", tokens, "--out", out, "--device",
         "cpu", "--steps", "4", "--seq-len", str(S), "--micro-batch", str(B), "--nproc",
         str(a.nproc), "--zero-stage", "3", "--dtype", "bf16", "--lr", "3e-3",
         "--checkpoint-weights"])
    checkpoint = os.path.join(out, "checkpoints", "step-00000004")
    consolidated = {}
    for dtype in ("f32", "bf16"):
        consolidated[dtype] = os.path.join(work, f"consolidated-{dtype}")
        run([a.zerotrain, "checkpoint", "consolidate", checkpoint, consolidated[dtype], "--dtype", dtype])

    ids = torch.randint(0, cfg_kw["vocab_size"], (B, S), generator=torch.Generator().manual_seed(7))
    failures = []
    hf32 = hf_logits(consolidated["f32"], ids)
    zt32 = zerotrain_logits(a.runner, a.device, consolidated["f32"], ids, work)
    rel = max_rel(hf32, zt32)
    print(f"{name:6s} consolidated f32: transformers vs zerotrain logits max rel {rel:.2e}")
    if rel >= 1e-4:
        failures.append(f"{name}: f32 logits differ by {rel:.2e}")
    bf16 = hf_logits(consolidated["bf16"], ids)
    for other in (os.path.join(checkpoint, "model"), os.path.join(out, "model")):
        if not torch.equal(hf_logits(other, ids), bf16):
            failures.append(f"{name}: {other} gives other logits than the bf16 consolidation")
    rounding = max_rel(bf16, hf32)
    print(f"{name:6s} consolidated bf16 = checkpoint model/ = <out>/model; vs the f32 masters "
          f"max rel {rounding:.2e}")
    if rounding >= 5e-2:
        failures.append(f"{name}: the bf16 weights are {rounding:.2e} away from the f32 masters")
    return failures


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--zerotrain", required=True)
    p.add_argument("--runner", required=True, help="tools/parity/parity_runner")
    p.add_argument("--device", default="cpu", help="the parity runner's device")
    p.add_argument("--nproc", type=int, default=2, help="CPU ranks of the training run")
    a = p.parse_args()
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        tokens = os.path.join(tmp, "tok.bin")
        run([a.zerotrain, "data", "prepare", "--tokenizer", TOKENIZER, "--input", TEXT, "--output", tokens])
        for name, cfg_kw in CASES.items():
            failures += check_case(name, cfg_kw, a, tmp, tokens)
    if failures:
        print("FAIL: " + "; ".join(failures))
        return 1
    print("consolidated checkpoints load in transformers with zerotrain's logits")
    return 0


if __name__ == "__main__":
    sys.exit(main())
