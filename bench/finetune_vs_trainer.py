#!/usr/bin/env python3
"""A short chat fine-tune with zerotrain beside the same run with transformers' Trainer (issue 19).

The task: a small Llama-shaped model is first pretrained by zerotrain on the King James Bible (plain
text), then fine-tuned on chat records {"user": "Recite Ge 1:3.", "assistant": <the verse>} built
from Debian's bible-kjv with their references; every 20th verse is held out as the validation set.
Only the assistant's tokens count in the loss (the chat template of the model directory's
tokenizer_config.json; `zerotrain data prepare --messages-field messages`).

Both frameworks fine-tune the same pretrained weights on the same rows in the same order, with the
same constant learning rate (the two warmup formulas differ by a step):
  - zerotrain with `--packing off` (one example per row, padded) and a ds_config (bf16, AdamW,
    clipping), and once more with `--packing on` (the default) for its throughput;
  - transformers' Trainer (bf16 autocast over f32 weights, AdamW, the same clipping), fed the rows zerotrain's data loader makes, in its order. The rows are rebuilt here
    from the token file as src/zerotrain/data/batch_rows.cpp lays them out, and the order from
    src/zerotrain/data/sequence_sampler.cpp's permutation. As a check of that reconstruction, both
    frameworks' first-step losses (same weights, same batch, before any update) must agree.
    Labels are the Trainer's usual unshifted labels (-100 where masked); the seq-len is chosen so
    that no example is cut, which makes them the same targets as zerotrain's.
  - The validation loss of both: the held-out file's first --eval-batches micro-batches of
    --seq-len + 1 token windows (zerotrain's [Note: evaluation]: examples packed, attention and
    positions restarting at each example), the loss summed over the unmasked targets and divided
    by their count. The Trainer's side computes it in a callback the same way (each window cut at
    its examples, every piece run from position 0), on the base model too.
Tokens/s: all positions of a step (rows x seq-len) over the median step time after --warmup-steps,
evaluation excluded; trained tokens/s: unmasked targets over the same time.

Two stages: `make-data` runs here (it needs Debian's `bible`); `run` on the GPU machine:
    python3 bench/finetune_vs_trainer.py make-data --out .carry/ft
    python3 .carry/ft/finetune_vs_trainer.py run --dir .carry/ft --zerotrain .carry/dev/bin/zerotrain \
        --work /tmp/ft --json $OUT/finetune_vs_trainer.json --svg $OUT/finetune_vs_trainer.svg
A CPU smoke run of the whole pipeline (tiny sizes): `run --device cpu --tiny`.
"""
import argparse
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MASK64 = (1 << 64) - 1

CHAT_TEMPLATE = (
    "{% for message in messages %}{{ '<|' + message['role'] + '|>\\n' + message['content'] }}"
    "{% if message['role'] == 'assistant' %}{{ eos_token }}{% endif %}{{ '\\n' }}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|assistant|>\\n' }}{% endif %}")

# ~82M parameters; vocab of the KJV tokenizer (assets/tokenizers/kjv-bpe-4096).
MODEL = {
    "architectures": ["LlamaForCausalLM"], "model_type": "llama", "vocab_size": 4096,
    "hidden_size": 768, "intermediate_size": 2048, "num_hidden_layers": 12,
    "num_attention_heads": 12, "num_key_value_heads": 4, "max_position_embeddings": 1024,
    "rms_norm_eps": 1e-5, "rope_theta": 10000.0, "hidden_act": "silu",
    "tie_word_embeddings": False, "attention_bias": False, "mlp_bias": False,
    "bos_token_id": 0, "eos_token_id": 0, "torch_dtype": "float32",
}
TINY = dict(MODEL, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
            num_attention_heads=4, num_key_value_heads=2)


# ---------------------------------------------------------------------------------------------
# make-data (here): the corpus, the chat records, the tokenizer directory and the model config.

def bible_lines():
    p = subprocess.run(["bible", "-f", "Gen1:1-Rev22:21"], stdin=subprocess.DEVNULL,
                       capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"[finetune] `bible` failed (Debian package bible-kjv): {p.stderr.strip()}")
    verses = []
    for line in p.stdout.splitlines():
        m = re.match(r"^([1-3]?[A-Za-z]+)([0-9]+):([0-9]+) (.*)$", line)
        if not m:
            sys.exit(f"[finetune] unexpected line from bible: {line[:80]!r}")
        verses.append((m.group(1), int(m.group(2)), int(m.group(3)), m.group(4)))
    return verses


def make_data(out):
    out.mkdir(parents=True, exist_ok=True)
    verses = bible_lines()
    with open(out / "kjv.txt", "w") as f:  # pretraining text: a verse per line, chapters apart
        last = None
        for book, chapter, _, text in verses:
            if last is not None and (book, chapter) != last:
                f.write("\n")
            last = (book, chapter)
            f.write(text + "\n")
    with open(out / "train.jsonl", "w") as train, open(out / "valid.jsonl", "w") as valid:
        for i, (book, chapter, verse, text) in enumerate(verses):
            record = {"messages": [{"role": "user", "content": f"Recite {book} {chapter}:{verse}."},
                                   {"role": "assistant", "content": text}]}
            (valid if i % 20 == 19 else train).write(json.dumps(record) + "\n")
    tok = out / "tokenizer"
    tok.mkdir(exist_ok=True)
    shutil.copy(ROOT / "assets/tokenizers/kjv-bpe-4096/tokenizer.json", tok / "tokenizer.json")
    (tok / "tokenizer_config.json").write_text(json.dumps({
        "tokenizer_class": "PreTrainedTokenizerFast", "bos_token": None,
        "eos_token": "<|endoftext|>", "pad_token": "<|endoftext|>",
        "chat_template": CHAT_TEMPLATE}, indent=1) + "\n")
    (out / "model_config.json").write_text(json.dumps(MODEL, indent=1) + "\n")
    (out / "tiny_config.json").write_text(json.dumps(TINY, indent=1) + "\n")
    shutil.copy(Path(__file__), out / Path(__file__).name)
    print(f"[finetune] wrote {out}: {len(verses)} verses, "
          f"{sum(1 for i in range(len(verses)) if i % 20 == 19)} held out")


# ---------------------------------------------------------------------------------------------
# zerotrain's rows and order, rebuilt (src/zerotrain/data/{sequence_sampler,batch_rows}.cpp).

def mix64(x):
    x = (x + 0x9E3779B97F4A7C15) & MASK64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & MASK64
    return x ^ (x >> 31)


class Permutation:
    """The sampler's keyed Feistel bijection of [0, n) with cycle walking."""

    def __init__(self, n, key):
        self.n = n
        bits = max(2, (n - 1).bit_length())
        self.half = (bits + 1) // 2
        self.mask = (1 << self.half) - 1
        self.keys, k = [], key
        for _ in range(4):
            k = mix64(k)
            self.keys.append(k)

    def encrypt(self, x):
        left, right = x >> self.half, x & self.mask
        for rk in self.keys:
            left, right = right, left ^ (mix64(right ^ rk) & self.mask)
        return (left << self.half) | right

    def __call__(self, i):
        x = self.encrypt(i)
        while x >= self.n:
            x = self.encrypt(x)
        return x


def epoch_order(n, seed, epoch):
    return Permutation(n, mix64(seed) ^ mix64((epoch + 0x632BE59BD9B4E019) & MASK64))


def read_token_file(path):
    import numpy as np
    data = Path(path).read_bytes()
    if data[:8] != b"ZTTOKENS":
        sys.exit(f"[finetune] {path}: not a token file")
    version, token_bytes = np.frombuffer(data, "<u4", 2, 8)
    num_tokens = int(np.frombuffer(data, "<u8", 1, 24)[0])
    header = int(np.frombuffer(data, "<u4", 1, 40)[0])
    eos = int(np.frombuffer(data, "<u4", 1, 44)[0])
    if version != 2:
        sys.exit(f"[finetune] {path}: version {version}, a chat token file is version 2")
    ids = np.frombuffer(data, "<u2" if token_bytes == 2 else "<u4", num_tokens, header)
    flags = np.frombuffer(data, "u1", num_tokens, header + num_tokens * int(token_bytes))
    return ids.astype(np.int64), flags, (eos if eos != 0xFFFFFFFF else 0)


def counts_as_target(flags):
    return ((flags & 1) != 0) & ((flags & 2) == 0)


def padded_rows(path, seq):
    """Every document as zerotrain's padded row: (inputs, targets), targets already shifted."""
    import numpy as np
    ids, flags, pad = read_token_file(path)
    starts = list(np.flatnonzero(flags & 2)) + [len(ids)]
    rows, longest = [], 0
    for b, e in zip(starts[:-1], starts[1:]):
        n = min(e - b, seq + 1)
        longest = max(longest, e - b)
        inputs = np.full(seq, pad, np.int64)
        targets = np.full(seq, -100, np.int64)
        inputs[:min(n, seq)] = ids[b:b + min(n, seq)]
        keep = counts_as_target(flags[b + 1:b + n])
        targets[:n - 1] = np.where(keep, ids[b + 1:b + n], -100)
        rows.append((inputs, targets))
    return rows, longest


def packed_windows(path, seq, count=None):
    """The file's windows of seq + 1 tokens as zerotrain's packed rows: (inputs, targets, starts)."""
    import numpy as np
    ids, flags, _ = read_token_file(path)
    total = (len(ids) - 1) // seq
    out = []
    for w in range(total if count is None else min(count, total)):
        a = w * seq
        inputs, nxt = ids[a:a + seq], ids[a + 1:a + seq + 1]
        targets = np.where(counts_as_target(flags[a + 1:a + seq + 1]), nxt, -100)
        starts = [0] + [p for p in range(1, seq) if flags[a + p] & 2]
        out.append((inputs, targets, starts))
    return out, total


def step_rows(num_rows, micro_batch, seed, steps):
    """The row indices of each step of a one-rank run (drop_last), epoch after epoch."""
    per_epoch = num_rows // micro_batch
    order, out = None, []
    for s in range(steps):
        epoch, k = divmod(s, per_epoch)
        if k == 0:
            order = epoch_order(num_rows, seed, epoch)
        out.append([order(k * micro_batch + r) for r in range(micro_batch)])
    return out


# ---------------------------------------------------------------------------------------------
# run (GPU machine): pretrain, prepare, fine-tune with zerotrain and with the Trainer.

def sh(cmd, log=None, env=None):
    t0 = time.time()
    p = subprocess.run([str(c) for c in cmd], text=True, capture_output=True, env=env)
    if log:
        Path(log).write_text(p.stdout + p.stderr)
    if p.returncode != 0:
        sys.exit(f"$ {' '.join(map(str, cmd))}\n{(p.stdout + p.stderr)[-4000:]}\nexit {p.returncode}")
    return p.stdout + p.stderr, time.time() - t0


def metrics(run_dir):
    train, evals = [], []
    for line in (Path(run_dir) / "metrics.jsonl").read_text().splitlines():
        r = json.loads(line)
        (evals if r.get("type") == "eval" else train).append(r)
    return train, evals


def median_after(values, warmup):
    kept = values[warmup:] or values
    return statistics.median(kept)


def window_loss_sum(model, windows, device, batch_pieces=64):
    """Sum of token losses and their count over packed windows, each cut at its examples and every
    piece run alone from position 0 (as attention and positions restart in zerotrain's rows)."""
    import torch
    import torch.nn.functional as F
    pieces = []
    for inputs, targets, starts in windows:
        bounds = starts + [len(inputs)]
        for b, e in zip(bounds[:-1], bounds[1:]):
            pieces.append((inputs[b:e], targets[b:e]))
    pieces.sort(key=lambda p: len(p[0]))
    total, count = 0.0, 0
    with torch.no_grad(), torch.autocast(device.type, dtype=torch.bfloat16,
                                         enabled=device.type == "cuda"):
        for i in range(0, len(pieces), batch_pieces):
            group = pieces[i:i + batch_pieces]
            width = max(len(p[0]) for p in group)
            inp = torch.zeros(len(group), width, dtype=torch.long)
            tgt = torch.full((len(group), width), -100, dtype=torch.long)
            for r, (x, t) in enumerate(group):
                inp[r, :len(x)] = torch.from_numpy(x)
                tgt[r, :len(t)] = torch.from_numpy(t)
            logits = model(input_ids=inp.to(device)).logits.float()  # right padding: causal is enough
            losses = F.cross_entropy(logits.view(-1, logits.shape[-1]), tgt.to(device).view(-1),
                                     ignore_index=-100, reduction="sum")
            total += float(losses)
            count += int((tgt != -100).sum())
    return total, count


def trainer_run(a, base_dir, rows, order, eval_windows):
    import torch
    import transformers
    from transformers import AutoModelForCausalLM, Trainer, TrainerCallback, TrainingArguments
    device = torch.device("cuda" if a.device == "cuda" else "cpu")
    t_start = time.time()
    model = AutoModelForCausalLM.from_pretrained(str(base_dir), torch_dtype=torch.float32,
                                                 attn_implementation=a.attn)
    model.to(device)

    def labels_of(targets):  # the Trainer's labels: unshifted, the model shifts them
        lab = torch.full((len(targets),), -100, dtype=torch.long)
        lab[1:] = torch.from_numpy(targets[:-1])
        return lab

    dataset = [{"input_ids": torch.from_numpy(rows[i][0]), "labels": labels_of(rows[i][1])}
               for step in order for i in step]

    class InOrder(Trainer):
        def _get_train_sampler(self, *args, **kwargs):  # the rows come in zerotrain's order
            return torch.utils.data.SequentialSampler(self.train_dataset)

        def training_step(self, *args, **kwargs):  # the step's loss unrounded (logs keep 4 digits)
            loss = super().training_step(*args, **kwargs)
            record["losses"].append(loss.detach())
            return loss

    record = {"steps": [], "evals": [], "eval_s": 0.0, "losses": []}

    def evaluate(step):
        was_training = model.training
        model.eval()
        if device.type == "cuda":
            torch.cuda.synchronize()
        t0 = time.time()
        total, count = window_loss_sum(model, eval_windows, device)
        if device.type == "cuda":
            torch.cuda.synchronize()
        record["eval_s"] += time.time() - t0
        record["evals"].append({"step": step, "eval_loss": total / count, "tokens": count})
        model.train(was_training)
        return time.time() - t0

    class Clock(TrainerCallback):
        def on_train_begin(self, args, state, control, **kw):
            evaluate(0)
            self.last = time.time()

        def on_step_end(self, args, state, control, **kw):
            now = time.time()
            spent = 0.0
            if state.global_step % a.eval_every == 0 or state.global_step == a.steps:
                spent = evaluate(state.global_step)
            record["steps"].append({"step": state.global_step, "step_s": now - self.last})
            self.last = time.time() if spent else now

    args = TrainingArguments(
        output_dir=str(a.work / "trainer"), per_device_train_batch_size=a.micro_batch,
        max_steps=a.steps, learning_rate=a.lr, lr_scheduler_type="constant", weight_decay=0.0, adam_beta1=0.9,
        adam_beta2=0.999, adam_epsilon=1e-8, max_grad_norm=1.0, bf16=device.type == "cuda",
        logging_steps=1, save_strategy="no", report_to=[], seed=a.seed, dataloader_num_workers=0,
        dataloader_drop_last=True, use_cpu=device.type != "cuda", disable_tqdm=True)
    trainer = InOrder(model=model, args=args, train_dataset=dataset, callbacks=[Clock()])
    t_train = time.time()
    out = trainer.train()
    wall_train = time.time() - t_train
    for entry, loss in zip(record["steps"], record.pop("losses")):
        entry["loss"] = float(loss)
    record.update(wall_total_s=time.time() - t_start, wall_train_s=wall_train,
                  train_runtime_s=float(out.metrics.get("train_runtime", wall_train)),
                  optim=str(args.optim), transformers=transformers.__version__,
                  torch=torch.__version__)
    return record


def run(a):
    import numpy as np
    d = a.dir.resolve()
    zt = str(Path(a.zerotrain).resolve())
    work = a.work
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    config = d / ("tiny_config.json" if a.tiny else "model_config.json")
    tok = d / "tokenizer"
    dev = ["--device", a.device] + (["--dtype", "bf16"] if a.device == "cuda" else [])
    logs = work / "logs"
    logs.mkdir()
    timings = {}

    # 1. Pretrain the base model on the plain text.
    sh([zt, "data", "prepare", "--tokenizer", tok / "tokenizer.json", "--input", d / "kjv.txt",
        "--split-on-blank-lines", "--append-eos", "--output", work / "kjv.bin"], logs / "prep_kjv.log")
    _, timings["pretrain_s"] = sh(
        [zt, "train", "--model", config, "--data", work / "kjv.bin", "--out", work / "pre",
         "--steps", a.pretrain_steps, "--micro-batch", a.pretrain_batch, "--seq-len",
         a.pretrain_seq, "--lr", "1e-3", "--warmup", "50", "--log-every", "50"] + dev,
        logs / "pretrain.log")
    base = work / "pre" / "model"
    for f in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copy(tok / f, base / f)

    # 2. The chat data, through the base model's template.
    for part in ("train", "valid"):
        sh([zt, "data", "prepare", "--tokenizer", base / "tokenizer.json", "--input",
            d / f"{part}.jsonl", "--messages-field", "messages", "--output", work / f"{part}.bin"],
           logs / f"prep_{part}.log")
    rows, longest = padded_rows(work / "train.bin", a.seq_len)
    if longest > a.seq_len + 1:
        sys.exit(f"[finetune] the longest example has {longest} tokens: --seq-len {a.seq_len} "
                 "would cut it; the Trainer's labels need every example whole")
    order = step_rows(len(rows), a.micro_batch, a.seed, a.steps)
    eval_windows, eval_total = packed_windows(work / "valid.bin", a.seq_len,
                                              a.eval_batches * a.micro_batch)
    ds = {"train_micro_batch_size_per_gpu": a.micro_batch, "gradient_accumulation_steps": 1,
          "gradient_clipping": 1.0, "bf16": {"enabled": a.device == "cuda"},
          "optimizer": {"type": "AdamW", "params": {"lr": a.lr, "betas": [0.9, 0.999],
                                                     "eps": 1e-8, "weight_decay": 0.0}},
          "zero_optimization": {"stage": 2}, "steps_per_print": 1}
    (work / "ds_config.json").write_text(json.dumps(ds, indent=1))

    # 3. zerotrain: padded rows (the Trainer's layout), then packed rows; the base model's eval.
    common = ["--model", base, "--data", work / "train.bin", "--eval-data", work / "valid.bin",
              "--eval-every", a.eval_every, "--eval-batches", a.eval_batches, "--steps", a.steps,
              "--seq-len", a.seq_len, "--micro-batch", a.micro_batch, "--seed", a.seed,
              "--deepspeed", work / "ds_config.json", "--schedule", "constant"] + dev
    zt_runs = {}
    for packing in ("off", "on"):
        out = work / f"zt_packing_{packing}"
        _, wall = sh([zt, "train", *common, "--packing", packing, "--out", out],
                     logs / f"zt_packing_{packing}.log")
        train, evals = metrics(out)
        zt_runs[packing] = {"wall_total_s": wall, "train": train, "evals": evals}
    text, _ = sh([zt, "train", "--model", base, "--eval-only", "--eval-data", work / "valid.bin",
                  "--eval-batches", a.eval_batches, "--seq-len", a.seq_len, "--micro-batch",
                  a.micro_batch] + dev, logs / "zt_eval_base.log")
    m = re.search(r"eval at step 0 \| loss ([0-9.]+)", text)
    zt_base_eval = float(m.group(1)) if m else None
    for run_ in zt_runs.values():  # the same weights as every run's step 0
        run_["evals"].insert(0, {"step": 0, "eval_loss": zt_base_eval})

    # 4. The Trainer on the same rows in the same order.
    hf = trainer_run(a, base, rows, order, eval_windows)

    # Trained tokens per step: the padded rows' unmasked targets (both padded runs); packed rows'
    # are counted from the windows zerotrain's packed loader visits.
    trained_padded = [int(sum((rows[i][1] != -100).sum() for i in step)) for step in order]
    windows, num_windows = packed_windows(work / "train.bin", a.seq_len)
    order_packed = step_rows(num_windows, a.micro_batch, a.seed, a.steps)
    trained_packed = [int(sum((windows[i][1] != -100).sum() for i in step)) for step in order_packed]
    positions = a.micro_batch * a.seq_len

    def summary(step_s, trained):
        t = median_after(step_s, a.warmup_steps)
        return {"median_step_s": t, "tokens_per_s": positions / t,
                "trained_tokens_per_s": statistics.mean(trained) / t}

    zt_off, zt_on = zt_runs["off"], zt_runs["on"]
    result = {
        "what": "chat fine-tune of a pretrained Llama-shaped model (KJV verse recall), zerotrain "
                "beside transformers' Trainer on the same rows in the same order",
        "model": json.loads(config.read_text()),
        "data": {"train_examples": len(rows), "longest_example_tokens": int(longest),
                 "eval_windows": len(eval_windows), "eval_windows_in_file": eval_total,
                 "train_positions_trained_share": float(np.mean(
                     [sum(int((rows[i][1] != -100).sum()) for i in s) / positions for s in order]))},
        "settings": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(a).items()
                     if k not in ("func",)},
        "ds_config": ds,
        "timings": timings,
        "zerotrain_packing_off": {
            **summary([positions / r["tokens_per_s"] for r in zt_off["train"]], trained_padded),
            "wall_total_s": zt_off["wall_total_s"],
            "loss": [r["loss"] for r in zt_off["train"]],
            "evals": [{"step": e["step"], "eval_loss": e["eval_loss"]} for e in zt_off["evals"]]},
        "zerotrain_packing_on": {
            **summary([positions / r["tokens_per_s"] for r in zt_on["train"]], trained_packed),
            "wall_total_s": zt_on["wall_total_s"],
            "loss": [r["loss"] for r in zt_on["train"]],
            "evals": [{"step": e["step"], "eval_loss": e["eval_loss"]} for e in zt_on["evals"]]},
        "trainer": {
            **summary([s["step_s"] for s in hf["steps"]], trained_padded),
            "wall_total_s": hf["wall_total_s"], "wall_train_s": hf["wall_train_s"],
            "eval_s": hf["eval_s"], "optim": hf["optim"], "transformers": hf["transformers"],
            "torch": hf["torch"], "loss": [s.get("loss") for s in hf["steps"]],
            "evals": hf["evals"]},
        "base_eval_loss": {"zerotrain": zt_base_eval, "trainer": hf["evals"][0]["eval_loss"]},
        "trained_tokens_per_step": {"padded": trained_padded, "packed": trained_packed},
        "machine": {"host": platform.node(), "gpu": gpu_name(a.device)},
    }
    checks(result)
    return result


def gpu_name(device):
    if device != "cuda":
        return None
    p = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"],
                       capture_output=True, text=True)
    return p.stdout.strip() or None


def checks(r):
    """What must hold for the comparison to mean anything; each is recorded, and a failure exits 1."""
    zt = r["zerotrain_packing_off"]
    hf = r["trainer"]
    first = (zt["loss"][0], hf["loss"][0])
    base = r["base_eval_loss"]
    falls = {k: r[k]["evals"][-1]["eval_loss"] < (base["zerotrain"] or float("inf"))
             for k in ("zerotrain_packing_off", "zerotrain_packing_on")}
    falls["trainer"] = hf["evals"][-1]["eval_loss"] < hf["evals"][0]["eval_loss"]
    pairs = [(x, y) for x, y in zip(zt["loss"], hf["loss"]) if y is not None]
    worst = max(abs(x - y) / abs(y) for x, y in pairs)
    # f32 on the CPU: the two frameworks differ only in summation order, so the curves coincide;
    # bf16 on the GPU rounds differently (autocast against bf16 weights) and may drift apart.
    limit = 1e-4 if r["settings"]["device"] == "cpu" else 0.05
    r["checks"] = {
        "train_loss_curves": {"max_relative_difference": worst, "limit": limit, "ok": worst <= limit},
        "first_step_loss": {"zerotrain": first[0], "trainer": first[1],
                            "ok": abs(first[0] - first[1]) <= 0.01 * abs(first[1])},
        "base_eval_loss": dict(base, ok=base["zerotrain"] is not None and
                               abs(base["zerotrain"] - base["trainer"]) <= 0.01 * base["trainer"]),
        "validation_loss_falls": dict(falls, ok=all(falls.values())),
    }


def table(r):
    rows = [("zerotrain --packing off", r["zerotrain_packing_off"]),
            ("transformers Trainer", r["trainer"]),
            ("zerotrain --packing on", r["zerotrain_packing_on"])]
    print(f"{'run':<26}{'tokens/s':>12}{'trained tok/s':>15}{'step ms':>10}{'first loss':>12}"
          f"{'last loss':>11}{'eval first':>12}{'eval last':>11}{'wall s':>9}")
    for name, x in rows:
        print(f"{name:<26}{x['tokens_per_s']:>12,.0f}{x['trained_tokens_per_s']:>15,.0f}"
              f"{1000 * x['median_step_s']:>10.2f}{x['loss'][0]:>12.4f}{x['loss'][-1]:>11.4f}"
              f"{x['evals'][0]['eval_loss']:>12.4f}{x['evals'][-1]['eval_loss']:>11.4f}"
              f"{x['wall_total_s']:>9.1f}")
    zt, hf = r["zerotrain_packing_off"], r["trainer"]
    print(f"zerotrain / Trainer, same rows: {zt['tokens_per_s'] / hf['tokens_per_s']:.2f}x tokens/s; "
          f"packed: {r['zerotrain_packing_on']['trained_tokens_per_s'] / hf['trained_tokens_per_s']:.2f}x "
          "trained tokens/s")
    for name, c in r["checks"].items():
        print(f"check {name}: {'ok' if c['ok'] else 'FAILED'} {json.dumps(c)}")


def svg(r, path):
    """Two panels: the training loss per step of the two runs on the same rows (zerotrain wide and
    pale, the Trainer thin on top: where they coincide one line shows), and the validation loss
    of all three runs against the trained (unmasked) tokens seen."""
    tokens = r["trained_tokens_per_step"]

    def seen(layout, step):
        return sum(tokens[layout][:step])

    runs = [("zerotrain --packing off", r["zerotrain_packing_off"], "padded", "#1f77b4", 5, 0.35),
            ("transformers Trainer", r["trainer"], "padded", "#d62728", 1.2, 1.0),
            ("zerotrain --packing on", r["zerotrain_packing_on"], "packed", "#2ca02c", 1.2, 1.0)]
    w, h, m, gap = 1100, 480, 60, 70
    pw = (w - 2 * m - gap) / 2
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" '
           'font-family="sans-serif" font-size="12"><rect width="100%" height="100%" fill="white"/>',
           f'<text x="{w / 2}" y="20" text-anchor="middle" font-size="14">Chat fine-tune of a '
           f'pretrained {r["model"]["hidden_size"]}x{r["model"]["num_hidden_layers"]} Llama: zerotrain '
           f'and transformers\' Trainer — {r["machine"]["gpu"]}</text>']

    def panel(x0, title, xlabel, series, xfmt):
        xs = [p[0] for _, _, pts, *_ in series for p in pts]
        ys = [p[1] for _, _, pts, *_ in series for p in pts]
        x1, y0, y1 = max(xs), min(ys), max(ys)
        sx = lambda v: x0 + pw * v / x1
        sy = lambda v: h - m - (h - 2 * m) * (v - y0) / (y1 - y0)
        out.append(f'<text x="{x0 + pw / 2}" y="{m - 14}" text-anchor="middle">{title}</text>')
        out.append(f'<line x1="{x0}" y1="{h - m}" x2="{x0 + pw}" y2="{h - m}" stroke="black"/>')
        out.append(f'<line x1="{x0}" y1="{m}" x2="{x0}" y2="{h - m}" stroke="black"/>')
        for i in range(6):
            yv, xv = y0 + (y1 - y0) * i / 5, x1 * i / 5
            out.append(f'<text x="{x0 - 6}" y="{sy(yv) + 4:.1f}" text-anchor="end">{yv:.2f}</text>')
            out.append(f'<text x="{sx(xv):.1f}" y="{h - m + 16}" text-anchor="middle">{xfmt(xv)}</text>')
        out.append(f'<text x="{x0 + pw / 2}" y="{h - m + 36}" text-anchor="middle">{xlabel}</text>')
        for k, (name, colour, pts, width, opacity, dots) in enumerate(series):
            if dots:
                for a_, b_ in pts:
                    out.append(f'<circle cx="{sx(a_):.1f}" cy="{sy(b_):.1f}" r="{width}" '
                               f'fill="{colour}" opacity="{opacity}"/>')
                out.append('<polyline fill="none" stroke="' + colour + '" stroke-width="1" points="' +
                           " ".join(f"{sx(a_):.1f},{sy(b_):.1f}" for a_, b_ in pts) + '"/>')
            else:
                out.append(f'<polyline fill="none" stroke="{colour}" stroke-width="{width}" '
                           f'opacity="{opacity}" points="' +
                           " ".join(f"{sx(a_):.1f},{sy(b_):.1f}" for a_, b_ in pts) + '"/>')
            out.append(f'<text x="{x0 + pw - 180}" y="{m + 16 + 16 * k}" fill="{colour}">{name}</text>')

    train = [(name, colour, [(i + 1, v) for i, v in enumerate(x["loss"]) if v is not None], width, op,
              False) for name, x, _, colour, width, op in runs[:2]]
    panel(m, "training loss per step (same rows, same order)", "step", train, lambda v: f"{v:.0f}")
    evals = [(name, colour, [(seen(layout, e["step"]), e["eval_loss"]) for e in x["evals"]],
              5 if k == 0 else 3, op, True) for k, (name, x, layout, colour, _, op) in enumerate(runs)]
    panel(m + pw + gap, "validation loss", "trained (unmasked) tokens", evals,
          lambda v: f"{v / 1e6:.2f}M")
    out.append("</svg>")
    Path(path).write_text("\n".join(out) + "\n")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    md = sub.add_parser("make-data", help="write the corpus, chat records, tokenizer and config")
    md.add_argument("--out", type=Path, required=True)
    pl = sub.add_parser("plot", help="draw the SVG again from a run's JSON")
    pl.add_argument("--json", type=Path, required=True)
    pl.add_argument("--svg", type=Path, required=True)
    r = sub.add_parser("run", help="pretrain, then fine-tune with zerotrain and the Trainer")
    r.add_argument("--dir", type=Path, required=True, help="what make-data wrote")
    r.add_argument("--zerotrain", required=True)
    r.add_argument("--work", type=Path, default=Path("/tmp/zt-finetune"))
    r.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    r.add_argument("--tiny", action="store_true", help="the tiny model and short runs (CPU smoke run)")
    r.add_argument("--pretrain-steps", type=int, default=600)
    r.add_argument("--pretrain-batch", type=int, default=32)
    r.add_argument("--pretrain-seq", type=int, default=512)
    r.add_argument("--steps", type=int, default=300)
    r.add_argument("--micro-batch", type=int, default=32)
    r.add_argument("--seq-len", type=int, default=192)
    r.add_argument("--lr", type=float, default=1e-4)
    r.add_argument("--eval-every", type=int, default=25)
    r.add_argument("--eval-batches", type=int, default=16)
    r.add_argument("--warmup-steps", type=int, default=10, help="steps left out of the median step time")
    r.add_argument("--seed", type=int, default=1234)
    r.add_argument("--attn", default="sdpa", help="the Trainer model's attn_implementation")
    r.add_argument("--json", type=Path)
    r.add_argument("--svg", type=Path)
    a = p.parse_args()
    if a.command == "make-data":
        make_data(a.out)
        return
    if a.command == "plot":
        svg(json.loads(a.json.read_text()), a.svg)
        return
    if a.tiny:
        a.pretrain_steps, a.pretrain_batch, a.pretrain_seq = 20, 8, 64
        a.steps, a.micro_batch, a.eval_every, a.eval_batches, a.warmup_steps = 12, 4, 4, 2, 2
    result = run(a)
    result["command"] = " ".join(sys.argv)
    result["commit"] = os.environ.get("ZT_COMMIT")
    table(result)
    if a.json:
        a.json.write_text(json.dumps(result, indent=1) + "\n")
    if a.svg:
        svg(result, a.svg)
    sys.exit(0 if all(c["ok"] for c in result["checks"].values()) else 1)


if __name__ == "__main__":
    main()
