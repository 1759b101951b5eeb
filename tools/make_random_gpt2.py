#!/usr/bin/env python3
"""Writes a randomly initialized GPT-2 checkpoint (model.safetensors, Hugging Face names) for the
shape of a config.json, initialized on the GPU by transformers, so `zerotrain train --model DIR`
reads weights in seconds instead of generating its seeded init on the host (about a minute for
GPT-2 XL). The config.json written beside them is the given one, unchanged. Used by
tools/device_run_offload.sh for the seed's GPT-2 XL case (a fine-tune, as in the write-up).

  tools/make_random_gpt2.py assets/models/gpt2-xl/config.json /tmp/gpt2-xl [--dtype float16]
"""
import argparse
import json
import os
import shutil

import torch
from transformers import GPT2Config, GPT2LMHeadModel


def main():
    p = argparse.ArgumentParser()
    p.add_argument("config")
    p.add_argument("out")
    p.add_argument("--dtype", default="float16", choices=["float16", "bfloat16", "float32"])
    a = p.parse_args()
    with open(a.config) as f:
        c = json.load(f)
    cfg = GPT2Config(n_embd=c["n_embd"], n_head=c["n_head"], n_layer=c["n_layer"],
                     n_positions=c["n_positions"], vocab_size=c["vocab_size"],
                     activation_function=c.get("activation_function", "gelu_new"),
                     layer_norm_epsilon=c.get("layer_norm_epsilon", 1e-5))
    torch.manual_seed(0)
    with torch.device("cuda" if torch.cuda.is_available() else "cpu"):
        model = GPT2LMHeadModel(cfg)
    model = model.to(getattr(torch, a.dtype))
    os.makedirs(a.out, exist_ok=True)
    model.save_pretrained(a.out, max_shard_size="20GB")
    shutil.copyfile(a.config, os.path.join(a.out, "config.json"))
    n = sum(t.numel() for t in model.parameters())
    print(f"wrote {a.out}: {n / 1e9:.3f}B parameters ({a.dtype})")


if __name__ == "__main__":
    main()
