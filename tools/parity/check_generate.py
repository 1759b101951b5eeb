#!/usr/bin/env python3
"""Greedy generation of `zerotrain generate` against transformers' generate (issue 19).

For small random models of the llama, mistral (a sliding window shorter than the text), qwen2 and
gpt2 families in f32, saved by transformers with a tokenizer.json beside them (the SentencePiece-
style fixture with Llama 2's "<s>" post-processor for llama and mistral, the default job's byte-level
BPE for qwen2 and gpt2; one qwen2 case with tokenizer_config.json's clean_up_tokenization_spaces),
runs both on the same prompt with do_sample=False and compares the new
text: zerotrain's stdout must equal tokenizer.decode(new_tokens, skip_special_tokens=True). Exits
non-zero on the first difference, printing both texts and the token ids transformers produced.
CI runs it on the CPU through scripts/parity_cpu.sh (transformers 4.46.3 over Debian's torch); on
the GPU machine `--device cuda` runs zerotrain there in f32 against the same CPU reference.

  python3 tools/parity/check_generate.py --zerotrain build/bin/zerotrain [--device cuda]
"""
import argparse, json, os, subprocess, sys, tempfile

import torch
import transformers.generation.utils as generation_utils
from transformers import AutoConfig, AutoModelForCausalLM, PreTrainedTokenizerFast

# generate() asks whether the model is FSDP-managed, which imports torch.distributed.fsdp; Debian's
# torch 1.13 cannot import that module under Python 3.11 (a dataclass with a mutable default). The
# models here are plain modules in one process: the answer is no.
generation_utils.is_fsdp_managed_module = lambda module: False

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SP_TOKENIZER = os.path.join(ROOT, "tests/fixtures/tokenizer/sp_bpe/tokenizer.json")
KJV_TOKENIZER = os.path.join(ROOT, "assets/tokenizers/kjv-bpe-4096/tokenizer.json")
NEW_TOKENS = 40

CASES = {
    # (tokenizer, prompt, config): vocab sizes match the tokenizers; head dims of 32 and 16.
    "llama": (SP_TOKENIZER, "Hello world, the quick brown fox",
              dict(model_type="llama", hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                   num_attention_heads=2, num_key_value_heads=1, vocab_size=1263,
                   max_position_embeddings=256, rms_norm_eps=1e-5, rope_theta=10000.0,
                   tie_word_embeddings=False, bos_token_id=1, eos_token_id=2)),
    "mistral": (SP_TOKENIZER, "Über allen Gipfeln ist Ruh",
                dict(model_type="mistral", hidden_size=64, intermediate_size=96, num_hidden_layers=2,
                     num_attention_heads=4, num_key_value_heads=2, vocab_size=1263,
                     max_position_embeddings=256, rms_norm_eps=1e-5, rope_theta=10000.0,
                     sliding_window=8, tie_word_embeddings=False, bos_token_id=1, eos_token_id=2)),
    "qwen2": (KJV_TOKENIZER, "In the beginning God created",
              dict(model_type="qwen2", hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                   num_attention_heads=4, num_key_value_heads=2, vocab_size=4096,
                   max_position_embeddings=256, rms_norm_eps=1e-6, rope_theta=1000000.0,
                   tie_word_embeddings=True, use_sliding_window=False, eos_token_id=0)),
    # tokenizer_config.json asks for transformers' clean-up of spaces (as Llama 3's does).
    "qwen2-cleanup": (KJV_TOKENIZER, "And Moses said unto the LORD ,",
                      dict(model_type="qwen2", hidden_size=64, intermediate_size=128,
                           num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                           vocab_size=4096, max_position_embeddings=256, rms_norm_eps=1e-6,
                           rope_theta=1000000.0, tie_word_embeddings=True, use_sliding_window=False,
                           eos_token_id=0)),
    "gpt2": (KJV_TOKENIZER, "And God said, Let there be light",
             dict(model_type="gpt2", n_embd=64, n_layer=2, n_head=2, vocab_size=4096, n_positions=128,
                  bos_token_id=0, eos_token_id=0, resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0,
                  activation_function="gelu_new")),
}


def make_model(name, cfg_kw, tokenizer_file, model_dir, clean_up):
    torch.manual_seed(sum(map(ord, name)))
    cfg = AutoConfig.for_model(**cfg_kw, initializer_range=0.2)
    cfg._attn_implementation = "eager"
    model = AutoModelForCausalLM.from_config(cfg, torch_dtype=torch.float32).eval()
    model.save_pretrained(model_dir, safe_serialization=True)
    with open(tokenizer_file, "rb") as src, open(os.path.join(model_dir, "tokenizer.json"), "wb") as dst:
        dst.write(src.read())
    if clean_up:
        with open(os.path.join(model_dir, "tokenizer_config.json"), "w") as f:
            json.dump({"clean_up_tokenization_spaces": True}, f)
    return model


def favour_punctuation(model, tok, model_dir):
    """Scales the (tied) embedding rows of a lone space and of punctuation so that greedy decoding
    picks them often: the text then holds " ," and " ." for the clean-up to act on."""
    ids = [i for i in tok.convert_tokens_to_ids(["\u0120", ".", ",", "?", "!"]) if i is not None]
    with torch.no_grad():
        model.get_input_embeddings().weight[ids] *= 6.0
    model.save_pretrained(model_dir, safe_serialization=True)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--zerotrain", required=True)
    p.add_argument("--device", default="cpu", help="zerotrain's device (transformers runs on the CPU)")
    a = p.parse_args()
    failed = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, (tokenizer_file, prompt, cfg_kw) in CASES.items():
            model_dir = os.path.join(tmp, name)
            clean_up = name.endswith("-cleanup")
            model = make_model(name, cfg_kw, tokenizer_file, model_dir, clean_up)
            tok = PreTrainedTokenizerFast(tokenizer_file=tokenizer_file,
                                          clean_up_tokenization_spaces=clean_up)
            if clean_up:
                favour_punctuation(model, tok, model_dir)
            ids = torch.tensor([tok(prompt)["input_ids"]])
            with torch.no_grad():
                out = model.generate(ids, attention_mask=torch.ones_like(ids), do_sample=False,
                                     max_new_tokens=NEW_TOKENS, pad_token_id=cfg_kw["eos_token_id"])
            new = out[0, ids.shape[1]:].tolist()
            expected = tok.decode(new, skip_special_tokens=True)
            if clean_up and expected == tok.decode(new, skip_special_tokens=True,
                                                   clean_up_tokenization_spaces=False):
                failed.append(name)
                print(f"{name}: the text gives the clean-up nothing to do: {expected!r}")
            run = subprocess.run([a.zerotrain, "generate", "--model", model_dir, "--prompt", prompt,
                                  "--max-new-tokens", str(NEW_TOKENS), "--device", a.device,
                                  "--dtype", "f32", "--quiet"],
                                 capture_output=True, text=True)
            got = run.stdout[:-1] if run.stdout.endswith("\n") else run.stdout
            ok = run.returncode == 0 and got == expected
            print(f"{name:13s} on {a.device}: prompt {ids.shape[1]:2d} tokens, {len(new):2d} new: "
                  f"{'equal' if ok else 'DIFFERENT'}")
            if not ok:
                failed.append(name)
                print(f"  transformers ids {new}\n  transformers: {expected!r}\n  zerotrain:    {got!r}"
                      f"\n  zerotrain stderr: {run.stderr.strip()}")
    if failed:
        print(f"FAIL: greedy generation differs for {', '.join(failed)}")
        return 1
    print("greedy generation equal to transformers for every family")
    return 0


if __name__ == "__main__":
    sys.exit(main())
