"""The short `zerotrain train` run that check_tfevents.py and check_wandb.py read back: a DeepSpeed
config with one monitor section on (and wall_clock_breakdown, so every DeepSpeed tag appears) on the
CPU, kjv-llama-4m over the docs' tokens. TAGS maps DeepSpeed's event names to metrics.jsonl keys.
"""
import glob, json, os, subprocess

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MICRO_BATCH, GRAD_ACCUM, SEQ_LEN, STEPS, LOG_EVERY = 2, 2, 32, 4, 2
TAGS = {  # DeepSpeed's event name -> metrics.jsonl key
    "train_loss": "loss",
    "lr": "lr",
    "elapsed_time_ms_forward": "forward_ms",
    "elapsed_time_ms_backward": "backward_ms",
    "elapsed_time_ms_backward_allreduce": "comm_ms",
    "elapsed_time_ms_step": "step_ms",
}


def run(cmd):
    print("+", " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)


def train(zerotrain, tmp, monitor):
    """Trains with `monitor` ({section name: section}) in the ds_config; returns the run's --out."""
    tokens = os.path.join(tmp, "tokens.bin")
    docs = sorted(glob.glob(os.path.join(REPO, "docs", "*.md")))
    run([zerotrain, "data", "prepare", "--quiet", "--tokenizer",
         os.path.join(REPO, "assets/tokenizers/kjv-bpe-4096/tokenizer.json"), "--input", *docs,
         "--append-eos", "--output", tokens])
    ds = {"train_micro_batch_size_per_gpu": MICRO_BATCH, "gradient_accumulation_steps": GRAD_ACCUM,
          "steps_per_print": LOG_EVERY, "wall_clock_breakdown": True, **monitor}
    ds_path = os.path.join(tmp, "ds_config.json")
    with open(ds_path, "w") as f:
        json.dump(ds, f)
    out = os.path.join(tmp, "run")
    run([zerotrain, "train", "--model", os.path.join(REPO, "assets/models/kjv-llama-4m/config.json"),
         "--data", tokens, "--out", out, "--steps", str(STEPS), "--seq-len", str(SEQ_LEN),
         "--device", "cpu", "--deepspeed", ds_path])
    return out
