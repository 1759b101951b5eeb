#!/usr/bin/env python3
"""The results of tools/device_run_offload.sh (issue 15's GPU measurements), in two steps:

  collect WORK --commit SHA --out summary.json   (on the GPU machine, by the device script)
      reads WORK/json (train_bench results, tools/peak_rss.py records, gtest's JSON, nvme_bench),
      WORK/runs/*/metrics.jsonl (zerotrain train), WORK/logs (out-of-memory lines, the FSDP2
      peer's RESULT line) and WORK/parts.jsonl (exit codes, skipped parts); evaluates the issue's
      targets where the parts ran and prints a table.
  parity RUNS --out parity.json   (on the GPU machine, by the device script's "parity" part)
      compares RUNS/parity_<placement> with RUNS/parity_none: losses and model/optimizer files.
  publish summary.json --command "..." [--out bench/results/offload_<gpu>.json]   (here)
      adds the command and date and writes the results file, named after the GPU (h100, h200).

Targets (issue 15, "Deliver" 6): the 3B step within 1.15x of max(GPU compute, CPU Adam, PCIe)
measured alone; offload/no-offload tokens/s >= 0.8 at accumulation 8; zerotrain >= 3x the FSDP2
peer's offload tokens/s; the largest model with offload >= 4x the largest without; NVMe swap rate
>= 80% of the raw O_DIRECT rate.
"""
import argparse
import datetime
import glob
import json
import os
import re
import sys


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def log_text(work, name):
    try:
        with open(os.path.join(work, "logs", name + ".log"), errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def part_records(work):
    records = {}
    try:
        with open(os.path.join(work, "parts.jsonl")) as f:
            for line in f:
                if line.strip():
                    r = json.loads(line)
                    records[r["name"]] = r
    except OSError:
        pass
    return records


def first_line(text, needle):
    for line in text.splitlines():
        if needle in line:
            return line.strip()
    return None


def last_error_line(text):
    """The last "[component] ..." error line of a log, else its last line."""
    lines = [l.strip() for l in text.splitlines() if l.strip()]
    errors = [l for l in lines if re.match(r"^\[[\w.-]+\] ", l)]
    chosen = errors or lines
    return chosen[-1][:400] if chosen else None


def cli_run(work, name, parts):
    """A `zerotrain train` run under peak_rss: its last metrics line, host peak, exit."""
    out = {"part": parts.get(name)}
    peak = load(os.path.join(work, "json", name + ".peak.json"))
    if peak:
        out.update(rc=peak["rc"], stopped_after_metrics=peak["stopped"], wall_s=peak["wall_s"],
                   host_peak_gib=peak["host_peak_gib"])
    metrics = os.path.join(work, "runs", name, "metrics.jsonl")
    if os.path.exists(metrics):
        with open(metrics) as f:
            lines = [json.loads(l) for l in f if l.strip()]
        if lines:
            m = lines[-1]
            out.update(trained_steps=m["step"], tokens_per_s=m["tokens_per_s"],
                       gpu_peak_gib=m["peak_mem_gib"], loss=m["loss"],
                       skipped_steps=m.get("skipped"), loss_scale=m.get("loss_scale"),
                       memory_peak_split_gib={k[len("peak_"):]: v for k, v in m.items()
                                              if k.startswith("peak_") and k.endswith("_gib")
                                              and k != "peak_mem_gib"})
    text = log_text(work, name)
    out["out_of_memory_line"] = first_line(text, "out of memory")
    if "trained_steps" not in out:
        out["last_line"] = last_error_line(text)
    return out


def bench_results(work, name):
    """train_bench's RESULT lines in its log (one per accumulation; they survive a timeout that
    stops the process before it writes its JSON), else its JSON file."""
    found = [json.loads(m.group(1)) for m in
             re.finditer(r"^RESULT (\{.*\})\s*$", log_text(work, name), re.M)]
    if not found:
        r = load(os.path.join(work, "json", name + ".json"))
        found = r if isinstance(r, list) else [r] if r else []
    return found


def bench_run(work, name, parts):
    found = bench_results(work, name)
    if not found:
        return {"name": name, "part": parts.get(name), "ok": False,
                "last_line": last_error_line(log_text(work, name))}
    r = dict(found[-1], ok=True, part=parts.get(name))
    return r


def collect(work, commit):
    parts = part_records(work)
    s = {"commit": commit, "machine": load(os.path.join(work, "json", "machine.json"))}
    try:
        with open(os.path.join(work, "logs", "gpu.txt")) as f:
            s["gpu"] = f.read().strip()
    except OSError:
        s["gpu"] = "unknown"
    s["parts"] = list(parts.values())

    gtest = load(os.path.join(work, "json", "gtest.json"))
    if gtest:
        failed = [f"{suite['name']}.{t['name']}" for suite in gtest.get("testsuites", [])
                  for t in suite.get("testsuite", []) if t.get("failures")]
        s["tests"] = {"ran": gtest.get("tests"), "failures": gtest.get("failures"),
                      "disabled": gtest.get("disabled"), "failed": failed}

    if any(n.startswith("gpt2_") for n in parts):
        oom = cli_run(work, "gpt2_stage0_mbs1", parts)
        s["gpt2_xl"] = {
            "stage0_mbs1": oom,
            "stage0_stops_with_oom_line": bool(oom.get("out_of_memory_line"))
                                          and oom.get("rc") not in (0, None),
            "weights": "random, written by tools/make_random_gpt2.py"
                       if (parts.get("gpt2_weights") or {}).get("rc") == 0
                       else "seeded init of assets/models/gpt2-xl/config.json",
        }
        for prec in ("fp16", "bf16"):
            r = cli_run(work, f"gpt2_offload_{prec}", parts)
            r["trains_at_mbs16"] = r.get("trained_steps", 0) > 0
            s["gpt2_xl"][f"zero3_offload_{prec}_mbs16"] = r

    sweep = []
    for n in (n for n in parts if n.startswith("sweep_")):
        found = bench_results(work, n)
        sweep += [dict(r, ok=True, part=parts[n]) for r in found] or [
            {"name": n, "ok": False, "part": parts[n], "last_line": last_error_line(log_text(work, n))}]
    if sweep:
        none = {(r["zero_stage"], r["grad_accum"]): r for r in sweep
                if r.get("ok") and r["offload"]["optimizer"] == "none"}
        rows = []
        for r in sweep:
            if not r.get("ok"):
                rows.append(r)
                continue
            row = {k: r[k] for k in ("zero_stage", "grad_accum", "offload", "step_s", "tok_s_gpu",
                                     "mfu_989", "peak_mem_gib", "host_peak_gib", "model_state_gib",
                                     "setup_s", "params_b")}
            if "parts" in r:
                row["parts"] = r["parts"]
                row["step_over_max_part"] = r["parts"]["step_over_max_part"]
                row["overlap_target_met"] = r["parts"]["step_over_max_part"] <= 1.15
            base = none.get((r["zero_stage"], r["grad_accum"]))
            if r["offload"]["optimizer"] != "none" and base:
                row["ratio_to_no_offload"] = r["tok_s_gpu"] / base["tok_s_gpu"]
                if r["grad_accum"] == 8:
                    row["ratio_target_met"] = row["ratio_to_no_offload"] >= 0.8
            rows.append(row)
        s["overlap_3b"] = rows

    peer_text = log_text(work, "peer_fsdp2_offload")
    m = re.search(r"^RESULT (\{.*\})\s*$", peer_text, re.M)
    if m or "peer_fsdp2_offload" in parts:
        peer = json.loads(m.group(1)) if m else {
            "ok": False, "last_line": last_error_line(peer_text)}
        peer["part"] = parts.get("peer_fsdp2_offload")
        s["peer_fsdp2_offload_3b"] = peer
        ours = [r for r in s.get("overlap_3b", []) if r.get("offload", {}).get("optimizer") == "cpu"
                and "tok_s_gpu" in r]
        if m and ours:
            s["vs_peer"] = {f"zero{r['zero_stage']}_offload_accum{r['grad_accum']}":
                            r["tok_s_gpu"] / peer["tok_s_gpu"] for r in ours}
            s["vs_peer_target_met"] = max(s["vs_peer"].values()) >= 3.0

    size = {}
    for side in ("none", "cpu", "nvme"):
        runs = []
        for n in sorted(parts, key=lambda n: list(parts).index(n)):
            if n.startswith(f"size_{side}_"):
                r = bench_run(work, n, parts)
                runs.append({"model": n[len(f"size_{side}_"):], "ok": r["ok"],
                             "params_b": r.get("params_b"), "step_s": r.get("step_s"),
                             "peak_mem_gib": r.get("peak_mem_gib"),
                             "host_peak_gib": r.get("host_peak_gib"),
                             "skipped": (parts.get(n) or {}).get("skipped"),
                             "line": None if r["ok"] else r.get("last_line")})
        if runs:
            size[side] = runs
    if size:
        def largest(side):
            ok = [r for r in size.get(side, []) if r["ok"]]
            return max(ok, key=lambda r: r["params_b"]) if ok else None
        size["largest_no_offload"] = largest("none")
        size["largest_cpu_offload"] = largest("cpu")
        if size["largest_no_offload"] and size["largest_cpu_offload"]:
            size["ratio"] = size["largest_cpu_offload"]["params_b"] / size["largest_no_offload"]["params_b"]
            size["target_met"] = size["ratio"] >= 4.0
        size["host"] = s["machine"]
        s["size_24gib"] = size

    gpu_parity = load(os.path.join(work, "json", "parity.json"))
    if gpu_parity is not None:
        s["parity_gpu"] = gpu_parity

    nvme = load(os.path.join(work, "json", "nvme_bench.json"))
    if nvme is not None or "nvme_bench" in parts:
        s["nvme_bench"] = nvme if nvme is not None else {"part": parts.get("nvme_bench")}
        ratio = (nvme or {}).get("ratio")
        if ratio:
            s["nvme_target_met"] = min(ratio.get("read", 0), ratio.get("write", 0)) >= 0.8
    return s


def print_table(s):
    p = lambda *a: print(*a, file=sys.stderr)
    p(f"GPU: {s.get('gpu')}   host: {s.get('machine')}")
    if "tests" in s:
        t = s["tests"]
        p(f"tests: {t['ran']} ran, {t['failures']} failed {t['failed'][:5]}")
    g = s.get("gpt2_xl")
    if g:
        p(f"GPT-2 XL stage 0 mbs 1: {'OOM line' if g['stage0_stops_with_oom_line'] else 'NO OOM LINE'}:"
          f" {g['stage0_mbs1'].get('out_of_memory_line')}")
        for prec in ("fp16", "bf16"):
            r = g[f"zero3_offload_{prec}_mbs16"]
            if r["trains_at_mbs16"]:
                p(f"GPT-2 XL ZeRO-3 offload {prec} mbs 16: {r['tokens_per_s']:.0f} tok/s, GPU peak"
                  f" {r['gpu_peak_gib']:.2f} GiB, host peak {r.get('host_peak_gib')} GiB")
            else:
                p(f"GPT-2 XL ZeRO-3 offload {prec} mbs 16: FAILED: {r.get('last_line')}")
    rows = s.get("overlap_3b", [])
    if rows:
        p(f"{'3B seq 4096':<14}{'accum':>6}{'offload':>9}{'step s':>9}{'tok/s':>9}{'GPU GiB':>9}"
          f"{'host GiB':>9}{'compute':>9}{'adam':>8}{'pcie':>8}{'step/max':>9}{'/none':>7}")
        for r in rows:
            if not r.get("ok", True) and "tok_s_gpu" not in r:
                p(f"{r.get('name', '?')}: FAILED: {r.get('last_line')}")
                continue
            q = r.get("parts", {})
            p(f"{'ZeRO-' + str(r['zero_stage']):<14}{r['grad_accum']:>6}{r['offload']['optimizer']:>9}"
              f"{r['step_s']:>9.3f}{r['tok_s_gpu']:>9.0f}{r['peak_mem_gib']:>9.2f}"
              f"{r['host_peak_gib']:>9.2f}{q.get('gpu_compute_s', float('nan')):>9.3f}"
              f"{q.get('cpu_adam_s', float('nan')):>8.3f}{q.get('pcie_s', float('nan')):>8.3f}"
              f"{r.get('step_over_max_part', float('nan')):>9.3f}"
              f"{r.get('ratio_to_no_offload', float('nan')):>7.2f}")
    if "peer_fsdp2_offload_3b" in s:
        peer = s["peer_fsdp2_offload_3b"]
        p(f"FSDP2 offload peer 3B: {peer.get('tok_s_gpu')} tok/s; zerotrain / peer: {s.get('vs_peer')}")
    z = s.get("size_24gib")
    if z:
        for side in ("none", "cpu", "nvme"):
            for r in z.get(side, []):
                p(f"size {side:<5}{r['model']:>6}: {'trains' if r['ok'] else 'fails'}"
                  f" {r.get('skipped') or ''} {r.get('line') or ''}"[:200])
        p(f"largest: no offload {(z.get('largest_no_offload') or {}).get('params_b')}B, "
          f"CPU offload {(z.get('largest_cpu_offload') or {}).get('params_b')}B, ratio {z.get('ratio')}")
    if "nvme_bench" in s:
        p(f"nvme_bench: swap / raw O_DIRECT {s['nvme_bench'].get('ratio')}")
    for r in s.get("parts", []):
        if "skipped" in r:
            p(f"skipped: {r['name']}: {r['skipped']}")


def parity(runs):
    """Each runs/parity_<placement> against runs/parity_none: losses and files, bitwise."""
    import hashlib

    def digest(path):
        try:
            with open(path, "rb") as f:
                return hashlib.sha256(f.read()).hexdigest()
        except OSError:
            return None

    def losses(run):
        out = []
        try:
            with open(os.path.join(run, "metrics.jsonl")) as f:
                for line in f:
                    r = json.loads(line)
                    if "loss" in r:
                        out.append([r.get("step"), r["loss"], r.get("grad_norm")])
        except (OSError, ValueError):
            pass
        return out

    def files(run):
        # The final weights and the last checkpoint's shard (one rank: its one file).
        latest = os.path.join(run, "checkpoints", "latest")
        tag = open(latest).read().strip() if os.path.exists(latest) else "missing"
        return {name: digest(os.path.join(run, name))
                for name in ("model/model.safetensors",
                             f"checkpoints/{tag}/rank-00000-of-00001.safetensors")}

    ref = os.path.join(runs, "parity_none")
    ref_losses, ref_files = losses(ref), files(ref)
    result = {"reference": {"steps": len(ref_losses), "files": ref_files}}
    ok = bool(ref_losses) and all(ref_files.values())
    for run in sorted(glob.glob(os.path.join(runs, "parity_*"))):
        name = os.path.basename(run)[len("parity_"):]
        if name == "none":
            continue
        got, got_files = losses(run), files(run)
        same = {"steps": len(got), "losses_bitwise": bool(got) and got == ref_losses,
                "files_bitwise": {k: v is not None and v == ref_files[k] for k, v in got_files.items()}}
        result[name] = same
        ok = ok and same["losses_bitwise"] and all(same["files_bitwise"].values())
    result["all_bitwise"] = ok
    return result


def gpu_tag(gpu):
    for tag in ("h100", "h200", "a100"):
        if tag in gpu.lower():
            return tag
    return "gpu"


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("collect")
    c.add_argument("work")
    c.add_argument("--commit", default="unknown")
    c.add_argument("--out", required=True)
    par = sub.add_parser("parity")
    par.add_argument("runs")
    par.add_argument("--out", required=True)
    pub = sub.add_parser("publish")
    pub.add_argument("summary")
    pub.add_argument("--command", required=True, help="how the numbers were produced")
    pub.add_argument("--out", default="")
    a = ap.parse_args()
    if a.cmd == "collect":
        s = collect(a.work, a.commit)
        with open(a.out, "w") as f:
            json.dump(s, f, indent=1)
        print_table(s)
        return
    if a.cmd == "parity":
        r = parity(a.runs)
        with open(a.out, "w") as f:
            json.dump(r, f, indent=1)
        print(json.dumps(r, indent=1))
        return
    s = load(a.summary)
    if s is None:
        sys.exit(f"[offload_results] cannot read {a.summary}")
    result = {"what": "issue 15 (offload to CPU and NVMe) on one GPU, in one call: the seed's GPT-2 XL"
                      " case under a 24 GiB cap, the 3B overlap sweep with its parts measured alone,"
                      " the FSDP2 offload peer, the largest model with and without offload, NVMe",
              "command": a.command, "commit": s.get("commit"), "gpu": s.get("gpu"),
              "date": datetime.date.today().isoformat()}
    result.update({k: v for k, v in s.items() if k not in result})
    out = a.out or os.path.join("bench", "results", f"offload_{gpu_tag(s.get('gpu', ''))}.json")
    with open(out, "w") as f:
        json.dump(result, f, indent=1)
        f.write("\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
