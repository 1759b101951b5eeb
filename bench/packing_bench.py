#!/usr/bin/env python3
"""What packing short chat examples gains: `zerotrain train --packing on` against `--packing off`.

Writes a deterministic synthetic chat dataset of short examples of varied length (a user turn of
--user-words and an assistant turn of --answer-words, drawn from a seeded generator), prepares it
with `zerotrain data prepare` (the Mistral v0.3 template of tests/fixtures/chat_templates and the
SentencePiece tokenizer of tests/fixtures/tokenizer/sp_bpe: user tokens masked, version 2 token
file), then trains --steps steps with each layout at the same --seq-len, --micro-batch and model, from the
same seeded random init. For each layout it reports:
  - positions/s: all input positions of the step (rows x seq_len), the trainer's tokens/s (median
    over the steps after --warmup-steps of --rounds runs per layout, the layouts alternating);
  - trained tokens/s: unmasked targets per second (positions/s x the epoch's share of positions
    whose target counts);
  - padding: the share of positions whose target lies past their example's end (0 when packed);
  - steps per epoch, and the time of one epoch at the measured rate.
The unmasked-target and padding counts come from the token file's flags ([Note: token flags] in
src/zerotrain/data/token_file.h) laid out as data::DataLoader lays out its rows (data_loader.h).
Prints a table and writes JSON (--json).

    python3 bench/packing_bench.py --zerotrain build-cpu/bin/zerotrain --json bench/results/packing_cpu.json
    python3 bench/packing_bench.py --zerotrain build/bin/zerotrain --device cuda --model llama-110m \
        --examples 20000 --seq-len 1024 --micro-batch 16 --steps 40 --json bench/results/packing_h100.json
"""
import argparse
import json
import os
import platform
import random
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORDS = ("the a of to and in that is was he for it with as his on be at by this had not are but "
         "from or have unto shall lord thou thy god said them him they all which were").split()

# A ~110M-parameter llama for the GPU (vocab cut to the sp_bpe tokenizer's size, padded to 64).
LLAMA_110M = {
    "architectures": ["LlamaForCausalLM"], "model_type": "llama", "vocab_size": 1280,
    "hidden_size": 768, "intermediate_size": 2048, "num_hidden_layers": 12,
    "num_attention_heads": 12, "num_key_value_heads": 12, "max_position_embeddings": 4096,
    "rms_norm_eps": 1e-5, "rope_theta": 10000.0, "tie_word_embeddings": False,
}


def run(cmd, cwd, env):
    p = subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, text=True, capture_output=True)
    if p.returncode != 0:
        sys.exit(f"$ {' '.join(map(str, cmd))}\n{p.stdout}{p.stderr}\nexit {p.returncode}")
    return p.stdout + p.stderr


def write_dataset(path, count, seed, user_words, answer_words):
    r = random.Random(seed)
    with open(path, "w") as f:
        for _ in range(count):
            user = " ".join(r.choice(WORDS) for _ in range(r.randint(*user_words)))
            answer = " ".join(r.choice(WORDS) for _ in range(r.randint(*answer_words)))
            f.write(json.dumps({"messages": [{"role": "user", "content": user},
                                             {"role": "assistant", "content": answer}]}) + "\n")


def read_flags(path, num_tokens):
    data = Path(path).read_bytes()
    return data[len(data) - num_tokens:]


def layout_counts(flags, seq, packing):
    """(rows, positions, unmasked targets, padding positions) of one epoch, as the loader lays it."""
    counts = [f & 1 for f in flags]
    if packing:
        rows = (len(flags) - 1) // seq
        targets = sum(sum(counts[i * seq + 1:i * seq + seq + 1]) for i in range(rows))
        return rows, rows * seq, targets, 0
    starts = [i for i, f in enumerate(flags) if f & 2] + [len(flags)]
    targets = padding = 0
    for begin, end in zip(starts, starts[1:]):
        real = min(end - begin - 1, seq)  # positions whose target is a token of the example
        targets += sum(counts[begin + 1:begin + 1 + real])
        padding += seq - real
    rows = len(starts) - 1
    return rows, rows * seq, targets, padding


def examples_cut(train_output):
    m = re.search(r"(\d+) examples longer than --seq-len \+ 1 tokens were cut", train_output)
    return int(m.group(1)) if m else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--zerotrain", required=True)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--model", default="kjv-llama-4m",
                    help="kjv-llama-4m (assets/models), llama-110m, or a config.json path")
    ap.add_argument("--dtype", default="f32")
    ap.add_argument("--examples", type=int, default=3000)
    ap.add_argument("--user-words", type=int, nargs=2, default=[3, 40])
    ap.add_argument("--answer-words", type=int, nargs=2, default=[2, 80])
    ap.add_argument("--seq-len", type=int, default=256)
    ap.add_argument("--micro-batch", type=int, default=8)
    ap.add_argument("--steps", type=int, default=12)
    ap.add_argument("--warmup-steps", type=int, default=2, help="steps of each run left out of the rate")
    ap.add_argument("--rounds", type=int, default=2, help="runs of each layout, alternating")
    ap.add_argument("--seed", type=int, default=19)
    ap.add_argument("--machine", default="", help="what ran it, for the JSON")
    ap.add_argument("--json", help="write the results here")
    ap.add_argument("--work", help="working directory (default: a temporary one)")
    a = ap.parse_args()

    zt = str(Path(a.zerotrain).resolve())
    work = Path(a.work) if a.work else Path(tempfile.mkdtemp(prefix="zt_packing_"))
    work.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    (work / "tok").mkdir(exist_ok=True)
    shutil.copy(ROOT / "tests/fixtures/tokenizer/sp_bpe/tokenizer.json", work / "tok")
    (work / "tok/tokenizer_config.json").write_text(
        '{"bos_token": "<s>", "eos_token": {"content": "</s>"}}')
    if a.model == "kjv-llama-4m":
        model = ROOT / "assets/models/kjv-llama-4m/config.json"
    elif a.model == "llama-110m":
        model = work / "llama-110m.json"
        model.write_text(json.dumps(LLAMA_110M))
    else:
        model = Path(a.model).resolve()

    write_dataset(work / "chat.jsonl", a.examples, a.seed, a.user_words, a.answer_words)
    out = run([zt, "data", "prepare", "--tokenizer", work / "tok/tokenizer.json",
               "--chat-template", ROOT / "tests/fixtures/chat_templates/mistral_v0_3.jinja",
               "--input", work / "chat.jsonl", "--messages-field", "messages",
               "--output", work / "chat.bin"], work, env)
    m = re.search(r"wrote [^\n]*: (\d+) documents, (\d+) tokens", out)
    documents, tokens = int(m.group(1)), int(m.group(2))
    flags = read_flags(work / "chat.bin", tokens)
    lengths = sorted(b - a_ for a_, b in zip(
        [i for i, f in enumerate(flags) if f & 2], [i for i, f in enumerate(flags) if f & 2][1:] + [tokens]))

    # The layouts alternate (on, off, off, on, ...) so that a shared machine's load falls on both.
    rates = {"on": [], "off": []}
    outputs = {}
    for i in range(a.rounds):
        for packing in (("on", "off") if i % 2 == 0 else ("off", "on")):
            out_dir = work / f"run_{packing}_{i}"
            shutil.rmtree(out_dir, ignore_errors=True)
            outputs[packing] = run(
                [zt, "train", "--model", model, "--init", "random", "--data", work / "chat.bin",
                 "--out", out_dir, "--device", a.device, "--dtype", a.dtype, "--steps", a.steps,
                 "--seq-len", a.seq_len, "--micro-batch", a.micro_batch, "--packing", packing,
                 "--log-every", 1, "--sample-tokens", 0, "--seed", 5], work, env)
            steps = [json.loads(line) for line in (out_dir / "metrics.jsonl").read_text().splitlines()]
            steps = [s for s in steps if s.get("type") != "eval"]
            rates[packing] += [s["tokens_per_s"] for s in steps[a.warmup_steps:]]
            outputs[packing + "_loss"] = steps[-1]["loss"]

    results = {}
    for packing in ("on", "off"):
        rows, positions, targets, padding = layout_counts(flags, a.seq_len, packing == "on")
        rate = statistics.median(rates[packing])
        text = outputs[packing]
        steps_per_epoch = rows // a.micro_batch
        results[packing] = {
            "positions_per_s": rate,
            "trained_tokens_per_s": rate * targets / positions,
            "padding_fraction": padding / positions,
            "unmasked_target_fraction": targets / positions,
            "rows_per_epoch": rows,
            "steps_per_epoch": steps_per_epoch,
            "epoch_seconds": steps_per_epoch * a.micro_batch * a.seq_len / rate,
            "unmasked_targets_per_epoch": targets,
            "positions_per_s_steps": [round(r, 1) for r in rates[packing]],
            "final_loss": outputs[packing + "_loss"],
            "examples_cut": examples_cut(text),
        }

    on, off = results["on"], results["off"]
    print(f"{documents} examples, {tokens} tokens (median {lengths[len(lengths) // 2]}, "
          f"min {lengths[0]}, max {lengths[-1]}), seq_len {a.seq_len}, micro-batch "
          f"{a.micro_batch}, {a.steps} steps, {a.device}, model {a.model}")
    print(f"{'packing':<8} {'positions/s':>12} {'trained tok/s':>14} {'padding':>8} "
          f"{'steps/epoch':>12} {'epoch s':>9}")
    for name, r in results.items():
        print(f"{name:<8} {r['positions_per_s']:>12.0f} {r['trained_tokens_per_s']:>14.0f} "
              f"{r['padding_fraction']:>8.1%} {r['steps_per_epoch']:>12} {r['epoch_seconds']:>9.1f}")
    gain = on["trained_tokens_per_s"] / off["trained_tokens_per_s"]
    layout_gain = on["unmasked_target_fraction"] / off["unmasked_target_fraction"]
    print(f"packing gain: {gain:.2f}x trained tokens per second, "
          f"{off['epoch_seconds'] / on['epoch_seconds']:.2f}x shorter epoch "
          f"({layout_gain:.2f}x trained targets per position: the gain at equal positions/s)")

    if a.json:
        commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "HEAD"], text=True,
                                capture_output=True).stdout.strip()
        record = {
            "bench": "bench/packing_bench.py",
            "command": shlex.join(["python3"] + sys.argv),
            "commit": commit,
            "machine": a.machine or platform.node(),
            "device": a.device, "model": a.model, "dtype": a.dtype,
            "dataset": {"examples": documents, "tokens": tokens, "seed": a.seed,
                        "user_words": a.user_words, "answer_words": a.answer_words,
                        "example_tokens_min": lengths[0], "example_tokens_median":
                        lengths[len(lengths) // 2], "example_tokens_max": lengths[-1]},
            "seq_len": a.seq_len, "micro_batch": a.micro_batch, "steps": a.steps, "rounds": a.rounds,
            "packing_on": on, "packing_off": off,
            "trained_tokens_per_s_gain": gain,
            "epoch_time_gain": off["epoch_seconds"] / on["epoch_seconds"],
            "trained_targets_per_position_gain": layout_gain,
        }
        Path(a.json).write_text(json.dumps(record, indent=2) + "\n")
        print(f"wrote {a.json}")


if __name__ == "__main__":
    main()
