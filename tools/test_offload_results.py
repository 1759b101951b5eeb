#!/usr/bin/env python3
"""Self-test of tools/offload_results.py collect on a made-up work directory of
tools/device_run_offload.sh: the overlap ratios and targets, the peer ratio, the size search's
largest models, a run that failed, a skipped part and the GPT-2 out-of-memory line. ctest
offload_results_selftest."""
import json
import os
import subprocess
import sys
import tempfile

TOOL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "offload_results.py")


def bench(stage, accum, optimizer, tok_s, step_s, parts=None, model="3b", params_b=3.6):
    r = {"zero_stage": stage, "grad_accum": accum, "offload": {"optimizer": optimizer, "param": "none"},
         "step_s": step_s, "tok_s_gpu": tok_s, "mfu_989": 0.1, "peak_mem_gib": 20.0,
         "host_peak_gib": 60.0, "model_state_gib": {}, "setup_s": 5.0, "params_b": params_b,
         "model": model}
    if parts:
        r["parts"] = parts
    return "RESULT " + json.dumps(r) + "\n"


def main():
    with tempfile.TemporaryDirectory() as work:
        for d in ("json", "logs", "runs/gpt2_offload_fp16"):
            os.makedirs(os.path.join(work, d))
        w = lambda path, text: open(os.path.join(work, path), "w").write(text)
        parts = [("sweep_z3_cpu", 0), ("sweep_z3_none", 0), ("sweep_z2_cpu", 1),
                 ("peer_fsdp2_offload", 0), ("gpt2_stage0_mbs1", 1), ("gpt2_offload_fp16", 0),
                 ("size_none_0.7b", 0), ("size_none_1.1b", 0), ("size_none_1b", 1),
                 ("size_cpu_6b", 0), ("size_cpu_7b", 1)]
        w("parts.jsonl", "".join(json.dumps({"name": n, "rc": rc, "wall_s": 1, "limit_s": 9}) + "\n"
                                 for n, rc in parts)
          + json.dumps({"name": "nvme_bench", "skipped": "not built"}) + "\n")
        w("json/machine.json", json.dumps({"cores": 16}))
        w("logs/gpu.txt", "NVIDIA H100 80GB HBM3, 81559 MiB, 580")
        over = {"gpu_compute_s": 2.0, "cpu_adam_s": 1.0, "pcie_s": 0.4, "max_part_s": 2.0,
                "step_over_max_part": 1.1}
        slow = dict(over, cpu_adam_s=1.5, max_part_s=1.5, step_over_max_part=1.4)
        w("logs/sweep_z3_cpu.log", bench(3, 8, "cpu", 14000, 2.2, over) + bench(3, 1, "cpu", 2000, 2.1, slow))
        w("logs/sweep_z3_none.log", bench(3, 8, "none", 16000, 2.0) + bench(3, 1, "none", 15000, 0.27))
        w("logs/sweep_z2_cpu.log", "[config] zero_optimization.offload_optimizer.device cpu: not supported yet\n")
        w("logs/peer_fsdp2_offload.log", 'noise\nRESULT {"tok_s_gpu": 1000.0}\n')
        w("logs/gpt2_stage0_mbs1.log", "zerotrain train: ...\n[train] out of memory in setup on cuda:0: asked 1 GiB\n")
        w("json/gpt2_stage0_mbs1.peak.json", json.dumps({"rc": 1, "stopped": False, "wall_s": 9, "host_peak_gib": 4.0}))
        w("json/gpt2_offload_fp16.peak.json", json.dumps({"rc": -15, "stopped": True, "wall_s": 30, "host_peak_gib": 40.0}))
        w("runs/gpt2_offload_fp16/metrics.jsonl", json.dumps(
            {"step": 8, "loss": 10.0, "tokens_per_s": 9000.0, "peak_mem_gib": 12.0, "skipped": 2,
             "loss_scale": 4096}) + "\n")
        w("logs/size_none_0.7b.log", bench(0, 1, "none", 1, 1, model="0.7b", params_b=0.7))
        w("logs/size_none_1.1b.log", bench(0, 1, "none", 1, 1, model="1.1b", params_b=1.09))
        w("logs/size_none_1b.log", "[train_bench] out of memory\n")
        w("logs/size_cpu_6b.log", bench(3, 1, "cpu", 1, 1, model="6b", params_b=6.29))
        w("logs/size_cpu_7b.log", "[alloc] pinned host allocation of 100 GiB failed\n")
        out = os.path.join(work, "summary.json")
        subprocess.run([sys.executable, TOOL, "collect", work, "--commit", "abc", "--out", out],
                       check=True, capture_output=True)
        s = json.load(open(out))

    rows = {(r.get("zero_stage"), r.get("grad_accum"), (r.get("offload") or {}).get("optimizer")): r
            for r in s["overlap_3b"]}
    z3a8 = rows[(3, 8, "cpu")]
    assert abs(z3a8["ratio_to_no_offload"] - 14000 / 16000) < 1e-9, z3a8
    assert z3a8["ratio_target_met"] is True and z3a8["overlap_target_met"] is True, z3a8
    z3a1 = rows[(3, 1, "cpu")]
    assert z3a1["overlap_target_met"] is False and "ratio_target_met" not in z3a1, z3a1
    failed = [r for r in s["overlap_3b"] if r.get("ok") is False]
    assert len(failed) == 1 and "not supported yet" in failed[0]["last_line"], failed
    assert s["vs_peer"]["zero3_offload_accum8"] == 14.0 and s["vs_peer_target_met"] is True, s["vs_peer"]
    g = s["gpt2_xl"]
    assert g["stage0_stops_with_oom_line"] is True, g["stage0_mbs1"]
    fp16 = g["zero3_offload_fp16_mbs16"]
    assert fp16["trains_at_mbs16"] and fp16["tokens_per_s"] == 9000.0 and fp16["host_peak_gib"] == 40.0, fp16
    assert g["zero3_offload_bf16_mbs16"]["trains_at_mbs16"] is False
    z = s["size_24gib"]
    assert z["largest_no_offload"]["model"] == "1.1b" and z["largest_cpu_offload"]["model"] == "6b", z
    assert abs(z["ratio"] - 6.29 / 1.09) < 1e-9 and z["target_met"] is True, z
    assert [r["ok"] for r in z["cpu"]] == [True, False], z["cpu"]
    assert any(p.get("skipped") == "not built" for p in s["parts"]), s["parts"]
    print("[offload_results selftest] passed")


if __name__ == "__main__":
    main()
