#!/usr/bin/env python3
"""Cross-check of zerotrain's offline wandb runs with the `wandb` package's own reader.

Runs `zerotrain train` briefly with a DeepSpeed config whose `wandb` section is on (and
wall_clock_breakdown, so every DeepSpeed tag appears), then reads <out>/wandb/offline-run-*/
run-<id>.wandb with wandb.sdk.internal.datastore (the reader `wandb sync` uses: file header,
blocks, chunk CRCs) and parses each record as wandb_internal_pb2.Record, checking the order
`wandb sync` relies on (header, run, history/summary pairs, exit, final), the run's id, project,
group and team, and every history value against metrics.jsonl: DeepSpeed's tags
"Train/Samples/<name>", _step = optimizer steps x global batch. Exits non-zero on any difference.
CI runs it through scripts/parity_cpu.sh.

  python3 tools/parity/check_wandb.py --zerotrain build/bin/zerotrain
"""
import argparse, glob, json, os, sys, tempfile

from monitor_run import GRAD_ACCUM, LOG_EVERY, MICRO_BATCH, STEPS, TAGS, train
import wandb
from wandb.proto import wandb_internal_pb2
from wandb.sdk.internal import datastore
from wandb.sdk.lib import proto_util

SECTION = {"enabled": True, "project": "zt-project", "group": "zt-group", "team": "zt-team"}


def read_records(path):
    wandb._assert_is_internal_process = True  # DataStore refuses to run outside wandb's process
    ds = datastore.DataStore()
    ds.open_for_scan(path)
    records = []
    while True:
        data = ds.scan_data()
        if data is None:
            return records
        r = wandb_internal_pb2.Record()
        r.ParseFromString(data)
        records.append(r)


def check(out):
    runs = glob.glob(os.path.join(out, "wandb", "offline-run-*"))
    if len(runs) != 1:
        return [f"expected one offline run in {out}/wandb, found {runs}"]
    run_id = runs[0].rsplit("-", 1)[1]
    path = os.path.join(runs[0], f"run-{run_id}.wandb")
    records = read_records(path)
    with open(os.path.join(out, "metrics.jsonl")) as f:
        lines = [json.loads(line) for line in f]
    kinds = [r.WhichOneof("record_type") for r in records]
    want_kinds = ["header", "run"] + ["history", "summary"] * len(lines) + ["exit", "final"]
    if kinds != want_kinds:
        return [f"record types {kinds}, expected {want_kinds}"]
    problems = []
    if [r.num for r in records] != list(range(1, len(records) + 1)):
        problems.append(f"record numbers {[r.num for r in records]}")
    r = records[1].run
    got = (r.run_id, r.project, r.run_group, r.entity)
    want = (run_id, SECTION["project"], SECTION["group"], SECTION["team"])
    if got != want:
        problems.append(f"run (id, project, group, entity) = {got}, expected {want}")
    samples = MICRO_BATCH * GRAD_ACCUM  # one rank
    for i, m in enumerate(lines):
        history = proto_util.dict_from_proto_list(records[2 + 2 * i].history.item)
        summary = proto_util.dict_from_proto_list(records[3 + 2 * i].summary.update)
        if history != summary:
            problems.append(f"step {m['step']}: summary {summary} differs from history {history}")
        want = {"Train/Samples/" + name: m[key] for name, key in TAGS.items()}
        want["_step"] = m["step"] * samples
        got = {k: v for k, v in history.items() if k not in ("_runtime", "_timestamp")}
        if got != want:
            problems.append(f"step {m['step']}: history {got}, expected {want}")
        if records[2 + 2 * i].history.step.num != want["_step"]:
            problems.append(f"step {m['step']}: history step {records[2 + 2 * i].history.step.num}")
    if records[-2].exit.exit_code != 0:
        problems.append(f"exit code {records[-2].exit.exit_code}")
    return problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--zerotrain", required=True, help="the zerotrain binary")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        problems = check(train(os.path.abspath(args.zerotrain), tmp, {"wandb": SECTION}))
    for p in problems:
        print("check_wandb:", p, file=sys.stderr)
    print("check_wandb:", "FAILED" if problems else "offline run matches metrics.jsonl "
          f"({len(TAGS)} tags x {STEPS // LOG_EVERY} logged steps, wandb {wandb.__version__})")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
