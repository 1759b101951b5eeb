#!/usr/bin/env python3
"""Training on masked chat data, end to end through the CLI, against a direct computation.

A chat JSON Lines file (user and assistant turns of varied length) goes through `zerotrain data
prepare` with the Mistral v0.3 template of tests/fixtures/chat_templates and the SentencePiece
tokenizer of tests/fixtures/tokenizer/sp_bpe (user tokens masked, version 2 token file); a tiny
llama is then trained from a seeded random init with --lr 0, so every step sees the init's weights and
each step's loss has a direct value to meet:
  - packing on, one process and 2 ranks (`train --nproc 2`): every step's global batch is the whole
    epoch of windows, so its loss must equal the validation loss of the same file (the mean token
    loss over its unmasked targets, packed rows with document starts, evaluation.h);
  - packing off, one process and 2 ranks: every step's global batch is every example, one per row,
    padded; its loss must equal the sum over the examples of each one's own summed token loss
    (the example alone in a token file, evaluated at seq_len = its length - 1) over their count;
  - masked tokens count only as context: another user turn before the same answer keeps the
    number of targets and changes their loss;
  - a padded run whose first micro-batch holds only a prompt (an example cut to its user turn, so
    every target is -100) still trains: finite losses and gradient norms, one example cut.
The two layouts' losses differ (packed windows cut examples), which the test also requires, so a
loader that ignored --packing fails it. ctest `train_chat_loss_e2e`.
"""
import argparse
import json
import math
import os
import random
import re
import shutil
import subprocess
import sys
from pathlib import Path

WORDS = ("the a of to and in that is was he for it with as his on be at by this had not are "
         "but from or have").split()


def fail(message):
    print(f"FAIL {message}")
    sys.exit(1)


def run(cmd, cwd, env):
    p = subprocess.run(cmd, cwd=cwd, env=env, text=True, capture_output=True)
    if p.returncode != 0:
        print("$ " + " ".join(map(str, cmd)) + "\n" + p.stdout + p.stderr)
        fail(f"exit {p.returncode}")
    return p.stdout + p.stderr


def conversations(count, seed):
    r = random.Random(seed)
    out = []
    for _ in range(count):
        user = " ".join(r.choice(WORDS) for _ in range(r.randint(3, 14)))
        answer = " ".join(r.choice(WORDS) for _ in range(r.randint(2, 16)))
        out.append({"messages": [{"role": "user", "content": user},
                                 {"role": "assistant", "content": answer}]})
    return out


class Cli:
    def __init__(self, zt, root, work, env):
        self.zt, self.root, self.work, self.env = zt, root, work, env
        self.tok = work / "tok/tokenizer.json"
        self.template = root / "tests/fixtures/chat_templates/mistral_v0_3.jinja"

    def prepare(self, records, name):
        (self.work / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
        out = run([self.zt, "data", "prepare", "--tokenizer", self.tok, "--chat-template",
                   self.template, "--input", f"{name}.jsonl", "--messages-field", "messages",
                   "--output", f"{name}.bin"], self.work, self.env)
        m = re.search(r"wrote [^\n]*: (\d+) documents, (\d+) tokens", out)
        t = re.search(r"loss mask: (\d+) of", out)
        if not m or not t:
            fail(f"data prepare said:\n{out}")
        return int(m.group(2)), int(t.group(1))

    def train(self, data, out, *flags, eval_data=None):
        cmd = [self.zt, "train", "--model", "tiny.json", "--data", data, "--out", out,
               "--device", "cpu", "--log-every", "1", "--sample-tokens", "0", "--seed", "5",
               *map(str, flags)]
        if eval_data:
            cmd += ["--eval-data", eval_data]
        text = run(cmd, self.work, self.env)
        rows = [json.loads(line) for line in (self.work / out / "metrics.jsonl").read_text().splitlines()]
        steps = [r for r in rows if r.get("type") != "eval"]
        evals = [r for r in rows if r.get("type") == "eval"]
        return text, steps, evals


def close(a, b, rel):
    return abs(a - b) <= rel * abs(b)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--zerotrain", required=True)
    ap.add_argument("--root", required=True)
    ap.add_argument("--work", required=True)
    a = ap.parse_args()
    root, work = Path(a.root).resolve(), Path(a.work).resolve()
    shutil.rmtree(work, ignore_errors=True)
    (work / "tok").mkdir(parents=True)
    shutil.copy(root / "tests/fixtures/tokenizer/sp_bpe/tokenizer.json", work / "tok")
    (work / "tok/tokenizer_config.json").write_text(
        '{"bos_token": "<s>", "eos_token": {"content": "</s>"}}')
    env = dict(os.environ, OMP_NUM_THREADS="1")
    cli = Cli(str(Path(a.zerotrain).resolve()), root, work, env)

    examples = conversations(16, seed=3)
    tokens, targets = cli.prepare(examples, "chat")
    vocab = len(json.loads((work / "tok/tokenizer.json").read_text())["model"]["vocab"]) + 8
    (work / "tiny.json").write_text(json.dumps({
        "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 32,
        "intermediate_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
        "num_key_value_heads": 2, "vocab_size": vocab, "max_position_embeddings": 128,
        "rms_norm_eps": 1e-5, "rope_theta": 10000.0, "tie_word_embeddings": False}))
    if not 0 < targets < tokens:
        fail(f"the mask counts {targets} of {tokens} tokens")

    # Packing on: a seq_len whose windows split into 4 equal shares, the whole epoch per step.
    seq = next(s for s in range(16, 48) if ((tokens - 1) // s) % 4 == 0)
    windows = (tokens - 1) // seq
    packed = {}
    for nproc, micro in ((1, windows // 2), (2, windows // 4)):
        _, steps, evals = cli.train("chat.bin", f"packed{nproc}", "--steps", 3, "--lr", 0,
                                    "--seq-len", seq, "--micro-batch", micro, "--grad-accum", 2,
                                    "--nproc", nproc, eval_data="chat.bin")
        direct = evals[-1]["eval_loss"]
        for s in steps:
            if not close(s["loss"], direct, 1e-6):
                fail(f"packed, {nproc} process(es), step {s['step']}: loss {s['loss']} != the "
                     f"mean over the unmasked targets {direct}")
        packed[nproc] = steps[0]["loss"]
        print(f"packing on, nproc {nproc}: loss {steps[0]['loss']:.8f} == direct {direct:.8f} "
              f"({evals[-1]['eval_tokens']} targets of {windows} windows of {seq})")

    # Packing off: each example alone, its summed token loss at seq_len = its length - 1.
    total_loss, total_count, longest = 0.0, 0, 0
    for i, record in enumerate(examples):
        n, _ = cli.prepare([record], f"one{i}")
        longest = max(longest, n)
        _, _, evals = cli.train(f"one{i}.bin", f"one{i}", "--steps", 1, "--lr", 0, "--seq-len",
                                n - 1, "--micro-batch", 1, eval_data=f"one{i}.bin")
        total_loss += evals[-1]["eval_loss"] * evals[-1]["eval_tokens"]
        total_count += evals[-1]["eval_tokens"]
    direct = total_loss / total_count
    for nproc, micro in ((1, len(examples) // 2), (2, len(examples) // 4)):
        text, steps, _ = cli.train("chat.bin", f"padded{nproc}", "--steps", 3, "--lr", 0,
                                   "--packing", "off", "--seq-len", longest, "--micro-batch",
                                   micro, "--grad-accum", 2, "--nproc", nproc)
        for s in steps:
            if not close(s["loss"], direct, 1e-6):
                fail(f"padded, {nproc} process(es), step {s['step']}: loss {s['loss']} != the "
                     f"examples' summed losses over their {total_count} targets {direct}")
        print(f"packing off, nproc {nproc}: loss {steps[0]['loss']:.8f} == direct {direct:.8f}")
    if close(packed[1], direct, 1e-4):
        fail("packed and padded rows give the same loss: --packing changed nothing")

    # A masked token counts only as context: another user turn before the same answer leaves the
    # count of targets as it was and changes their loss.
    def one_example_loss(record, name):
        n, _ = cli.prepare([record], name)
        _, _, evals = cli.train(f"{name}.bin", name, "--steps", 1, "--lr", 0, "--seq-len", n - 1,
                                "--micro-batch", 1, eval_data=f"{name}.bin")
        return evals[-1]["eval_loss"], evals[-1]["eval_tokens"]
    other_user = json.loads(json.dumps(examples[0]))
    other_user["messages"][0]["content"] = "from his god they shall not have"
    before, after = one_example_loss(examples[0], "context_a"), one_example_loss(other_user, "context_b")
    if before[1] != after[1] or close(before[0], after[0], 1e-6):
        fail(f"another user turn: (loss, targets) {before} -> {after}; expected the same count "
             "and another loss")

    # A micro-batch whose targets are all masked: the first example cut inside its user turn.
    long_prompt = {"messages": [{"role": "user", "content": " ".join(["the"] * 60)},
                                {"role": "assistant", "content": "it was"}]}
    prompt_tokens, prompt_targets = cli.prepare([long_prompt], "long_prompt")
    if prompt_tokens - prompt_targets <= 25:
        fail(f"the long prompt has {prompt_tokens - prompt_targets} masked tokens, not a whole row")
    cli.prepare([long_prompt] + examples[:3], "masked")
    text, steps, _ = cli.train("masked.bin", "masked", "--steps", 4, "--lr", 1e-2,
                               "--packing", "off", "--seq-len", 24, "--micro-batch", 1,
                               "--grad-accum", 2)
    if not re.search(r"examples cut +[1-9][0-9]* examples longer than --seq-len \+ 1 tokens were cut", text):
        fail(f"the summary does not count the example cut to its prompt:\n{text}")
    for s in steps:
        if not (math.isfinite(s["loss"]) and math.isfinite(s["grad_norm"]) and s["grad_norm"] > 0):
            fail(f"step {s['step']} with a fully masked micro-batch: {s}")
    print(f"a fully masked micro-batch: {len(steps)} steps trained, losses "
          + ", ".join(f"{s['loss']:.4f}" for s in steps))
    print("PASS")


if __name__ == "__main__":
    main()
