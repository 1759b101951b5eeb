#!/usr/bin/env python3
"""The README's "Fine-tune your own model" example, run as written on a tiny model.

Reads the command lines between the finetune-example markers of README.md and runs them with sh -e
in a fresh work directory holding what the README assumes: my-model/ (a tiny llama with the default
job's tokenizer and a chat template, made here by one `zerotrain train` step from a random init),
train.jsonl and valid.jsonl (conversations: a line of docs/ARCHITECTURE.md from the user, the next
line from the assistant) and ds_config.json (the Hugging Face Trainer's ZeRO-3 config of
tests/fixtures/ds_configs/valid/). Passes when every command succeeds, the validation loss is
reported after steps 10, 20 and 30 and falls, the consolidated directory loads in `generate` and
the weights equal the run's <out>/model. ctest `readme_finetune_example`.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

TINY_LLAMA = {
    "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 64,
    "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 2,
    "num_key_value_heads": 1, "vocab_size": 4096, "max_position_embeddings": 256,
    "rms_norm_eps": 1e-5, "rope_theta": 10000.0, "tie_word_embeddings": False,
    "bos_token_id": 1, "eos_token_id": 2,
}


# A plain template of the ChatML kind; the default job's tokenizer has <|endoftext|> as a special
# token, the rest is text.
CHAT_TEMPLATE = ("{% for m in messages %}{{ '<|' + m['role'] + '|>\\n' + m['content'] }}"
                 "{% if m['role'] == 'assistant' %}{{ eos_token }}{% endif %}{{ '\\n' }}{% endfor %}")


def fail(message):
    print(f"FAIL {message}")
    sys.exit(1)


def readme_commands(readme):
    text = readme.read_text()
    match = re.search(r"<!-- finetune-example:begin[^>]*-->\n(.*?)<!-- finetune-example:end -->",
                      text, re.S)
    if not match:
        fail(f"{readme}: no finetune-example markers")
    lines = [line[4:] for line in match.group(1).splitlines() if line.startswith("    ")]
    if not lines:
        fail(f"{readme}: no indented command lines between the markers")
    return "\n".join(lines) + "\n"


def run(cmd, cwd, env):
    print("$ " + (cmd if isinstance(cmd, str) else " ".join(cmd)), flush=True)
    p = subprocess.run(cmd, cwd=cwd, env=env, text=True, capture_output=True,
                       shell=isinstance(cmd, str))
    print(p.stdout + p.stderr, flush=True)
    if p.returncode != 0:
        fail(f"exit {p.returncode}")
    return p.stdout + p.stderr


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--zerotrain", required=True)
    ap.add_argument("--root", required=True, help="the project's source directory")
    ap.add_argument("--work", required=True)
    a = ap.parse_args()
    root, work = Path(a.root), Path(a.work)
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    zt = Path(a.zerotrain).resolve()
    if zt.name != "zerotrain":
        fail(f"{zt}: the README calls the binary `zerotrain`")
    env = dict(os.environ, PATH=f"{zt.parent}:{os.environ.get('PATH', '')}", OMP_NUM_THREADS="1")
    tokenizer = root / "assets/tokenizers/kjv-bpe-4096/tokenizer.json"

    # What the README assumes is there: a model directory, JSON Lines data and a ds_config.
    (work / "tiny.json").write_text(json.dumps(TINY_LLAMA))
    run([str(zt), "data", "prepare", "--tokenizer", str(tokenizer), "--input",
         str(root / "README.md"), "--output", "base.bin"], work, env)
    run([str(zt), "train", "--model", "tiny.json", "--data", "base.bin", "--out", "base",
         "--device", "cpu", "--steps", "1", "--seq-len", "32", "--micro-batch", "2",
         "--sample-tokenizer", str(tokenizer), "--sample-tokens", "1"], work, env)
    shutil.copytree(work / "base/model", work / "my-model")
    shutil.copy(tokenizer, work / "my-model/tokenizer.json")
    (work / "my-model/tokenizer_config.json").write_text(json.dumps(
        {"eos_token": "<|endoftext|>", "chat_template": CHAT_TEMPLATE}))
    lines = [line.strip() for line in (root / "docs/ARCHITECTURE.md").read_text().splitlines()
             if line.strip()]
    chats = [{"messages": [{"role": "user", "content": q}, {"role": "assistant", "content": a}]}
             for q, a in zip(lines[:-1], lines[1:])]
    for name, part in (("train.jsonl", chats[:-20]), ("valid.jsonl", chats[-20:])):
        (work / name).write_text("".join(json.dumps(c) + "\n" for c in part))
    shutil.copy(root / "tests/fixtures/ds_configs/valid/hf_trainer_zero3_auto.json",
                work / "ds_config.json")

    out = run(["sh", "-e", "-c", readme_commands(root / "README.md")], work, env)

    evals = [(int(s), float(v)) for s, v in re.findall(r"eval after step (\d+) \| loss ([0-9.]+)", out)]
    if [s for s, _ in evals] != [10, 20, 30]:
        fail(f"evaluations after steps {[s for s, _ in evals]}, expected 10, 20, 30")
    if not evals[-1][1] < evals[0][1]:
        fail(f"the validation loss did not fall: {evals}")
    records = [json.loads(l) for l in (work / "runs/ft/metrics.jsonl").read_text().splitlines()]
    if len([r for r in records if r.get("type") == "eval"]) != 3:
        fail("metrics.jsonl does not hold 3 eval records")
    if (work / "my-model-ft/model.safetensors").read_bytes() != \
            (work / "runs/ft/model/model.safetensors").read_bytes():
        fail("the consolidated weights differ from runs/ft/model")
    if "[generate]" not in out:
        fail("generate printed no summary")
    print(f"ok   README example: validation loss {evals[0][1]} -> {evals[-1][1]}, consolidated, "
          "generated")


if __name__ == "__main__":
    main()
