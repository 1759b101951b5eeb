#!/usr/bin/env python3
"""Accelerate config files end to end on CPU ranks (issue 37): the seeds' four files of
../shared/seed-accelerate (their `/path/to/` placeholders pointed at the project's copies of the
ds_configs they name) each train through one of the three ways in, and give bitwise the losses of
the flags they stand for:

  zero2_plugin.yaml               zerotrain train --accelerate-config FILE
                                  = --nproc 2 --zero-stage 2 --dtype fp16 --clip 1 --grad-accum 1
  zero2_config_file.yaml          zerotrain launch --config-file FILE --mpi -- zerotrain train
                                  = --nproc 2 --deepspeed zero2_config_accelerate.json --dtype fp16
  zero3_offload_config_file.yaml  mpirun -n 2 zerotrain train --accelerate-config FILE
                                  = --nproc 2 --deepspeed zero3_offload_config_accelerate.json
                                    --dtype fp16
  fsdp_full_shard.yaml            zerotrain launch --config-file FILE -- zerotrain train
                                  = --nproc 4 --zero-stage 3 --dtype bf16 (and no clipping key:
                                    --clip's value, the training script's)

`zerotrain config check --accelerate-config FILE` is checked on each (the stage and precision it
resolves to). Run: accelerate_cli.py --zerotrain BIN --root REPO --work DIR
"""
import argparse
import hashlib
import json
import os
import pathlib
import shutil
import subprocess
import sys

SEED_DIR_NAMES = ("tests/fixtures/seed_accelerate", "../shared/seed-accelerate")


def find_seed_dir(root):
    for rel in SEED_DIR_NAMES:
        d = (root / rel).resolve()
        if (d / "zero2_plugin.yaml").is_file():
            return d
    sys.exit(f"[accelerate_cli] no seed Accelerate files in {SEED_DIR_NAMES}")


class Harness:
    def __init__(self, zt, root, work):
        self.zt, self.root, self.work = zt, root, work
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True)
        self.env = dict(os.environ, OMP_NUM_THREADS="1")
        self.env.pop("ZEROTRAIN_ACCELERATE_CONFIG", None)
        self.tokens = work / "tok.bin"
        self.run([zt, "data", "prepare", "--tokenizer",
                  str(root / "assets/tokenizers/kjv-bpe-4096/tokenizer.json"), "--input",
                  str(root / "docs/ARCHITECTURE.md"), "--output", str(self.tokens)])
        self.failures = []

    def run(self, argv):
        p = subprocess.run([str(a) for a in argv], capture_output=True, text=True, env=self.env,
                           timeout=300)
        if p.returncode != 0:
            sys.exit(f"[accelerate_cli] {' '.join(map(str, argv))} exited {p.returncode}:\n"
                     f"{p.stdout[-3000:]}\n{p.stderr[-3000:]}")
        return p

    def train_args(self, out, log_every=True):
        """The run's flags; the write-ups' ds_configs set steps_per_print, which --log-every must
        then agree with, so those runs leave it out (their metrics hold the last step)."""
        return ["train", "--model", self.root / "assets/models/kjv-llama-4m/config.json",
                "--data", self.tokens, "--out", out, "--device", "cpu", "--steps", "3",
                "--seq-len", "32", "--micro-batch", "2", "--lr", "1e-3", "--warmup", "1"] + \
            (["--log-every", "1"] if log_every else [])

    def fail(self, what):
        print(f"FAIL {what}")
        self.failures.append(what)


def seed_files(h, seed_dir):
    """The seed YAML files with their placeholders pointed at the project's ds_configs."""
    configs = {"zero2_config_accelerate.json":
               h.root / "tests/fixtures/ds_configs/valid/seed_zero2_write_up.json",
               "zero3_offload_config_accelerate.json":
               h.root / "bench/configs/zero3_offload_config_accelerate.json"}
    d = h.work / "configs"
    d.mkdir()
    for name, src in configs.items():
        shutil.copy(src, d / name)
    for yaml in seed_dir.glob("*.yaml"):
        (d / yaml.name).write_text(yaml.read_text().replace("/path/to/", f"{d}/"))
    return d


def losses(out):
    rows = [json.loads(l) for l in (out / "metrics.jsonl").read_text().splitlines()]
    return [(r["step"], r["loss"], r["grad_norm"]) for r in rows if "loss" in r]


def weights(out):
    return hashlib.sha256((out / "model/model.safetensors").read_bytes()).hexdigest()


def check_run(h, name, stage, accelerate_argv, flags, log_every=True):
    """Stages are bitwise alike on CPU ranks by design, so the stage is read from the header."""
    a, b = h.work / f"{name}_accelerate", h.work / f"{name}_flags"
    header = h.run(accelerate_argv(a)).stdout
    if f"ZeRO model state       stage {stage}:" not in header:
        return h.fail(f"{name}: the run's header does not say ZeRO stage {stage}")
    h.run([h.zt] + h.train_args(b, log_every) + flags)
    got, want = losses(a), losses(b)
    if not want or got != want:
        return h.fail(f"{name}: losses {got} differ from the flags' {want}")
    if weights(a) != weights(b):
        return h.fail(f"{name}: the trained weights differ from the flags' run")
    print(f"ok   {name}: stage {stage}; losses of {len(got)} logged steps and the trained weights bitwise equal "
          f"to {' '.join(map(str, flags))}")


def check_resolved(h, name, yaml, stage, precision):
    p = h.run([h.zt, "config", "check", "--accelerate-config", yaml, "--micro-batch", "2",
               "--grad-accum", "1", "--clip", "1", "--hidden-size", "256", "--lr", "1e-3",
               "--warmup", "1", "--steps", "3", "--weight-decay", "0"])
    run = json.loads(p.stdout)
    ds = run["ds_config"]
    got = (ds["zero_optimization"]["stage"],
           "bf16" if ds["bf16"]["enabled"] else "fp16" if ds["fp16"]["enabled"] else "f32")
    if got != (stage, precision):
        return h.fail(f"{name}: config check resolved stage/precision {got}, not {(stage, precision)}")
    print(f"ok   {name}: config check resolves ZeRO stage {stage}, {precision}, "
          f"{run['num_processes']} processes")


def check_rank_variables(h, d):
    """The torchrun-style variables `launch --config-file` gives each rank, on one machine and as
    the second of two (the training runs above go through mpirun)."""
    two = d / "two_machines.yaml"
    two.write_text("distributed_type: MULTI_GPU\nnum_processes: 4\nnum_machines: 2\n"
                   "machine_rank: 1\nmain_process_ip: 10.1.2.3\nmain_process_port: 29555\n"
                   "gpu_ids: '0,1'\n")
    show = ["sh", "-c", "echo $RANK $WORLD_SIZE $LOCAL_RANK $LOCAL_WORLD_SIZE $MASTER_ADDR "
                        "$MASTER_PORT ${CUDA_VISIBLE_DEVICES:-all} $ZEROTRAIN_ACCELERATE_CONFIG"]
    for yaml, want in [(d / "fsdp_full_shard.yaml",
                        {f"[rank {r}] {r} 4 {r} 4 127.0.0.1" for r in range(4)}),
                       (two, {f"[rank {r}] {r} 4 {r - 2} 2 10.1.2.3 29555 0,1" for r in (2, 3)})]:
        out = h.run([h.zt, "launch", "--config-file", yaml, "--"] + show).stdout.splitlines()
        ok = len(out) == len(want) and all(
            l.endswith(str(yaml)) and any(l.startswith(w + " ") for w in want) for l in out)
        if not ok or len({l.split()[1] for l in out}) != len(want):
            return h.fail(f"launch --config-file {yaml.name}: rank variables {out}, expected {want}")
        print(f"ok   launch --config-file {yaml.name}: {len(out)} ranks with their variables")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--zerotrain", required=True)
    ap.add_argument("--root", required=True)
    ap.add_argument("--work", required=True)
    args = ap.parse_args()
    root = pathlib.Path(args.root).resolve()
    h = Harness(pathlib.Path(args.zerotrain).resolve(), root, pathlib.Path(args.work))
    d = seed_files(h, find_seed_dir(root))
    zt = h.zt
    check_run(h, "zero2_plugin", 2,
              lambda out: [zt] + h.train_args(out) + ["--accelerate-config", d / "zero2_plugin.yaml"],
              ["--nproc", "2", "--zero-stage", "2", "--dtype", "fp16", "--clip", "1",
               "--grad-accum", "1"])
    check_run(h, "zero2_config_file", 2,
              lambda out: [zt, "launch", "--config-file", d / "zero2_config_file.yaml", "--mpi",
                           "--", zt] + h.train_args(out, log_every=False),
              ["--nproc", "2", "--deepspeed", d / "zero2_config_accelerate.json", "--dtype", "fp16"],
              log_every=False)
    mpirun = ["mpirun", "-n", "2", "--oversubscribe", "--bind-to", "none"]
    if os.geteuid() == 0:
        mpirun.append("--allow-run-as-root")
    check_run(h, "zero3_offload_config_file", 3,
              lambda out: mpirun + [zt] + h.train_args(out, log_every=False) +
              ["--accelerate-config", d / "zero3_offload_config_file.yaml"],
              ["--nproc", "2", "--deepspeed", d / "zero3_offload_config_accelerate.json",
               "--dtype", "fp16"], log_every=False)
    check_run(h, "fsdp_full_shard", 3,
              lambda out: [zt, "launch", "--config-file", d / "fsdp_full_shard.yaml", "--mpi", "--",
                           zt] + h.train_args(out),
              ["--nproc", "4", "--zero-stage", "3", "--dtype", "bf16"])
    check_rank_variables(h, d)
    for name, stage, precision in [("zero2_plugin", 2, "fp16"), ("zero2_config_file", 2, "fp16"),
                                   ("zero3_offload_config_file", 3, "fp16"),
                                   ("fsdp_full_shard", 3, "bf16")]:
        check_resolved(h, name, d / f"{name}.yaml", stage, precision)
    if h.failures:
        sys.exit(f"[accelerate_cli] {len(h.failures)} failed")
    print("[accelerate_cli] all passed")


if __name__ == "__main__":
    main()
