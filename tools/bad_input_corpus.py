#!/usr/bin/env python3
"""Runs the bad-input corpus (tests/bad_inputs/, issue 17) against a built zerotrain and classifies
every run:
  clear          exits with the case's code (1 a refused input, 2 a bad command line) and one
                 error line (warnings and `data prepare`'s "skipped FILE:LINE: why" notices
                 aside) holding the expected text, printable ASCII, short;
  unclear        exits non-zero some other way (wrong code, other message, several lines, raw
                 bytes, "unexpected error");
  crash          killed by a signal, or a sanitizer report / "terminate called" in the output;
  hang           still running at --timeout;
  wrong-success  exits 0.
Before the cases, the controls (the valid fixtures the cases break) must succeed.

  tools/bad_input_corpus.py --zerotrain build/bin/zerotrain [--jobs N] [--only SUBSTRING]
      [--timeout 60] [--min-cases 300] [--keep DIR] [--list] [--json out.json]

Prints one line per case that is not clear, then
"N cases: clear A, unclear B, crash C, hang D, wrong-success E". Exit status 0 only when every case
is clear, the controls pass and there are at least --min-cases cases. ctest runs it in the default
and the sanitizer build (tests/CMakeLists.txt).
"""
import argparse
import concurrent.futures
import importlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "bad_inputs"))

import fixtures  # noqa: E402

FAMILIES = ["cases_safetensors", "cases_index", "cases_model_dir", "cases_config",
            "cases_tokenizer", "cases_tokens", "cases_chat", "cases_ds_config", "cases_checkpoint",
            "cases_command_line", "cases_special_files", "cases_accelerate"]
CRASH = re.compile(r"ERROR: AddressSanitizer|ERROR: LeakSanitizer|runtime error:|"
                   r"UndefinedBehaviorSanitizer|terminate called|Segmentation fault|"
                   r"stack-overflow|Aborted")
MAX_LINE = 1000
# CLI11 ends its parse errors with this hint on a line of its own.
CLI_HINT = "Run with --help for more information."


def load_cases(only):
    cases = []
    for module in FAMILIES:
        cases += importlib.import_module(module).cases()
    names = [c.name for c in cases]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        sys.exit(f"bad_input_corpus: repeated case names: {sorted(dup)}")
    return [c for c in cases if only is None or only in c.name or only == c.family]


def fill(text, values):
    for k, v in values.items():
        text = text.replace("{" + k + "}", v)
    return text


def prepare(case, fx, case_dir):
    os.makedirs(case_dir, exist_ok=True)
    values = fx.placeholders(case_dir)
    for rel, content in case.files.items():
        if callable(content):
            content = content(fx)
        path = os.path.join(case_dir, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        data = fill(content, values).encode() if isinstance(content, str) else content
        with open(path, "wb") as f:
            f.write(data)
    if case.setup:
        case.setup(case_dir, fx)
    return [fill(a, values) for a in case.argv]


def run(binary, argv, cwd, timeout):
    env = dict(os.environ, OMP_NUM_THREADS="1")
    start = time.monotonic()
    try:
        p = subprocess.run([binary] + argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                           capture_output=True, timeout=timeout)
        return p.returncode, p.stdout, p.stderr, time.monotonic() - start
    except subprocess.TimeoutExpired as e:
        return None, e.stdout or b"", e.stderr or b"", time.monotonic() - start


def printable(data):
    return all(b in (9, 10) or 32 <= b < 127 for b in data)


def classify(case, expect, rc, out, err):
    """(kind, why) for one finished run; `expect` is the case's, placeholders filled."""
    text = (out + err).decode("utf-8", "replace")
    if rc is None:
        return "hang", "still running at the timeout"
    if rc < 0 or CRASH.search(text):
        return "crash", f"exit {rc}"
    if rc == 0:
        return "wrong-success", "exit 0"
    # A skipped record's notice is not an error: the run goes on past it (and stops, when every
    # record was skipped, with its own one line).
    errors = [l for l in err.decode("utf-8", "replace").splitlines()
              if l.strip() and "warning" not in l and l.strip() != CLI_HINT
              and not l.startswith("skipped ")]
    if rc != case.rc:
        return "unclear", f"exit {rc}, expected {case.rc}"
    if not printable(out + err):
        return "unclear", "raw bytes in the output"
    if len(errors) != 1:
        return "unclear", f"{len(errors)} error lines"
    line = errors[0]
    if "unexpected error" in line:
        return "unclear", "an unexpected error"
    if len(line) > MAX_LINE:
        return "unclear", f"a {len(line)}-character line"
    if expect not in line:
        return "unclear", f"no {expect!r} in the message"
    return "clear", ""


def shown(err):
    lines = err.decode("utf-8", "replace").splitlines()
    text = " | ".join(lines[-3:])
    return text if len(text) < 600 else text[:600] + "..."


def run_controls(binary, fx, timeout):
    """The valid inputs must work, or every case would be refused for the wrong reason."""
    checks = [
        ("base training run", fx.base_run_argv()),
        ("base f16 training run", fx.base_run_argv("f16")),
        ("resume of the base checkpoint", ["train", "--model", fx.model, "--data", fx.tokens,
                                           "--out", os.path.join(fx.root, "resumed"), "--resume",
                                           fx.ckpt] + fixtures.TRAIN_FLAGS[:2] +
         ["--steps", "2"] + fixtures.TRAIN_FLAGS[4:]),
        ("data prepare", ["data", "prepare", "--tokenizer", fx.tokenizer, "--input", fx.text,
                          "--output", os.path.join(fx.root, "prepared.bin"), "--quiet"]),
        ("config check", ["config", "check", os.path.join(
            ROOT, "tests/fixtures/ds_configs/valid/batch_only_micro.json")]),
        ("estimate", ["estimate", "--model", fx.config, "--seq", "16"]),
    ]
    ok = True
    for what, argv in checks:
        rc, _, err, _ = run(binary, argv, fx.root, timeout)
        if rc != 0:
            print(f"CONTROL FAILED {what}: exit {rc}: {shown(err)}")
            ok = False
    return ok


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--zerotrain", required=True)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--only", help="run only the cases whose name holds this text (or a family)")
    ap.add_argument("--timeout", type=float, default=60)
    ap.add_argument("--min-cases", type=int, default=0)
    ap.add_argument("--keep", help="write the cases' files here and keep them")
    ap.add_argument("--list", action="store_true", help="print the cases and exit")
    ap.add_argument("--json", help="write every case's result here")
    args = ap.parse_args()
    cases = load_cases(args.only)
    if args.list:
        for c in cases:
            print(f"{c.family:12} {c.name:50} exit {c.rc}  {c.expect}")
        return 0
    binary = os.path.abspath(args.zerotrain)
    work = args.keep or tempfile.mkdtemp(prefix="zt-bad-inputs-")
    if args.keep:
        shutil.rmtree(work, ignore_errors=True)
    fx = fixtures.Fixtures(os.path.join(work, "shared"))
    fx.write()
    start = time.monotonic()
    controls_ok = run_controls(binary, fx, args.timeout)

    def one(case):
        case_dir = os.path.join(work, "cases", case.name)
        try:
            argv = prepare(case, fx, case_dir)
        except OSError as e:
            return case, "unclear", f"setup failed: {e}", 0.0, b""
        rc, out, err, secs = run(binary, argv, case_dir, args.timeout)
        kind, why = classify(case, fill(case.expect, fx.placeholders(case_dir)), rc, out, err)
        return case, kind, why, secs, err

    counts = {k: 0 for k in ("clear", "unclear", "crash", "hang", "wrong-success")}
    results = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for case, kind, why, secs, err in pool.map(one, cases):
            counts[kind] += 1
            results.append({"name": case.name, "family": case.family, "kind": kind, "why": why,
                            "seconds": round(secs, 2)})
            if kind != "clear":
                print(f"{kind.upper()} {case.name} ({case.family}): {why}; expected exit "
                      f"{case.rc} with {case.expect!r}; got: {shown(err)}")
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    summary = (f"{len(cases)} cases: clear {counts['clear']}, unclear {counts['unclear']}, "
               f"crash {counts['crash']}, hang {counts['hang']}, "
               f"wrong-success {counts['wrong-success']}")
    print(f"{summary} ({time.monotonic() - start:.0f} s, {args.jobs} jobs)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"summary": summary, "cases": results}, f, indent=1)
    if len(cases) < args.min_cases:
        print(f"only {len(cases)} cases, fewer than --min-cases {args.min_cases}")
        return 1
    return 0 if controls_ok and counts["clear"] == len(cases) else 1


if __name__ == "__main__":
    sys.exit(main())
