#!/usr/bin/env python3
"""Cross-check of zerotrain's TensorBoard event files with the `tensorboard` package's own readers.

Runs `zerotrain train` briefly with a DeepSpeed config whose `tensorboard` section is on (and
wall_clock_breakdown, so every DeepSpeed tag appears), then reads the event file it wrote with
tensorboard.backend.event_processing.event_file_loader.EventFileLoader (the loader TensorBoard's
backend uses: record framing, both CRC-32C checks, Event parsing, the simple_value -> tensor
migration) and with EventAccumulator (what the UI shows), and compares every scalar with
metrics.jsonl: DeepSpeed's tags "Train/Samples/<name>", step = optimizer steps x global batch,
value = the JSON value as float32 within one float32 step (metrics.jsonl keeps 9 significant digits
of the double, so rounding that to float32 may land one step away from the double's own rounding).
Exits non-zero on any difference. CI runs it through
scripts/parity_cpu.sh.

  python3 tools/parity/check_tfevents.py --zerotrain build/bin/zerotrain
"""
import argparse, glob, json, os, sys, tempfile

from monitor_run import GRAD_ACCUM, LOG_EVERY, MICRO_BATCH, STEPS, TAGS, train
import numpy as np
from tensorboard.backend.event_processing import event_accumulator, event_file_loader
from tensorboard.util import tensor_util

def expected_scalars(metrics_path):
    with open(metrics_path) as f:
        lines = [json.loads(line) for line in f]
    samples = MICRO_BATCH * GRAD_ACCUM  # one rank
    return [("Train/Samples/" + name, m["step"] * samples, np.float32(m[key]))
            for m in lines for name, key in TAGS.items()]


def same(got, want):
    """Equal within one float32 step (see the docstring)."""
    return abs(np.float32(got) - want) <= np.spacing(want)


def check(logdir, metrics_path):
    problems = []
    files = sorted(glob.glob(os.path.join(logdir, "events.out.tfevents.*")))
    if len(files) != 1:
        return [f"expected one event file in {logdir}, found {files}"]
    events = list(event_file_loader.EventFileLoader(files[0]).Load())
    # The loader stops quietly at a bad CRC or a truncated record: the count catches that.
    want = expected_scalars(metrics_path)
    if len(events) != 1 + len(want):
        return [f"{files[0]}: {len(events)} events, expected {1 + len(want)}"]
    if events[0].file_version != "brain.Event:2":
        problems.append(f"first event's file_version is {events[0].file_version!r}")
    for event, (tag, step, value) in zip(events[1:], want):
        if len(event.summary.value) != 1:
            problems.append(f"step {event.step}: {len(event.summary.value)} values, expected 1")
            continue
        v = event.summary.value[0]
        got = np.float32(tensor_util.make_ndarray(v.tensor).item())
        if (v.tag, event.step) != (tag, step) or not same(got, value):
            problems.append(f"got ({v.tag}, {event.step}, {got}), expected ({tag}, {step}, {value})")
        if v.metadata.plugin_data.plugin_name != "scalars":
            problems.append(f"{v.tag}: not migrated to a scalar (plugin {v.metadata.plugin_data.plugin_name!r})")
    acc = event_accumulator.EventAccumulator(logdir)
    acc.Reload()
    for name in TAGS:
        tag = "Train/Samples/" + name
        shown = [(s.step, np.float32(s.value)) for s in acc.Scalars(tag)]
        expected = [(step, value) for t, step, value in want if t == tag]
        if len(shown) != len(expected) or not all(
                s == e and same(sv, ev) for (s, sv), (e, ev) in zip(shown, expected)):
            problems.append(f"EventAccumulator shows {shown} for {tag}")
    return problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--zerotrain", required=True, help="the zerotrain binary")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        out = train(os.path.abspath(args.zerotrain), tmp, {"tensorboard": {
            "enabled": True, "output_path": os.path.join(tmp, "tb"), "job_name": "job"}})
        logdir, metrics = os.path.join(tmp, "tb", "job"), os.path.join(out, "metrics.jsonl")
        problems = check(logdir, metrics)
    for p in problems:
        print("check_tfevents:", p, file=sys.stderr)
    print("check_tfevents:", "FAILED" if problems else "event file matches metrics.jsonl "
          f"({len(TAGS)} tags x {STEPS // LOG_EVERY} logged steps)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
