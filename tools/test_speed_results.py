#!/usr/bin/env python3
"""Self-test of tools/speed_results.py on a made-up folder of tools/device_run_speed.sh: the lower
of our runs is each target's figure, ratios are against the peer of the same call, a missing
figure is left out rather than invented, failed tests are named, and a log without its start-up
line stops the tool with one line naming the file. ctest speed_results_selftest."""
import json
import os
import subprocess
import sys
import tempfile

TOOL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "speed_results.py")


def kernel_rows(fwd_ms, bwd_ms):
    fwd_flops = 4.0 * 4096 * 4096 * 128 * 32 / 2
    row = lambda kernel, ms, flops: {"kernel": kernel, "ms": ms, "shape": "1x4096x32x128",
                                     "dtype": "bf16", "tflops": flops / (ms * 1e-3) / 1e12}
    both = 3.5 * fwd_flops / ((fwd_ms + bwd_ms) * 1e-3) / 1e12  # as kernel_bench's targets say
    return {"results": [row("attention_fwd cudnn", fwd_ms, fwd_flops),
                        row("attention_bwd cudnn", bwd_ms, 2.5 * fwd_flops),
                        row("attention_fwd native", 0.75, fwd_flops)],
            "targets": {"attention_fwd_bwd_cudnn_tflops": {"goal": 420, "value": both,
                                                           "met": both >= 420}}}


def run(folder, out):
    return subprocess.run([sys.executable, TOOL, folder, "--commit", "abc1234", "--out", out],
                          capture_output=True, text=True)


def main():
    failures = []

    def check(cond, what):
        if not cond:
            failures.append(what)

    with tempfile.TemporaryDirectory() as work:
        r = os.path.join(work, "r")
        os.makedirs(r)
        w = lambda name, text: open(os.path.join(r, name), "w").write(text)
        w("gpu.txt", "NVIDIA H200, 143771 MiB, 580.159.04\n")
        w("kb_1.json", json.dumps(kernel_rows(0.25, 0.87)))
        w("kb_2.json", json.dumps(kernel_rows(0.26, 0.90)))  # the slower run: its figures count
        w("peer_1.json", json.dumps({"rows": [{"mode": "default", "fwd_bwd_tflops": 467.0}]}))
        w("startup_1.log", "memory at start ...\nstart-up (rank 0): 0.3 s from launch to the first step\n")
        w("startup_2.log", "start-up (rank 0): 0.4 s from launch to the first step\n")
        w("zt_1b_a.json", json.dumps({"tok_s_gpu": 57000.0, "peak_mem_gib": 34.6}))
        w("zt_1b_b.json", json.dumps({"tok_s_gpu": 56000.0, "peak_mem_gib": 34.6}))
        w("peer_1b.log", 'noise\nRESULT {"tok_s_gpu": 40000.0, "peak_mem_gib": 42.9}\n')
        w("zt_1b_ac_a.json", json.dumps({"tok_s_gpu": 45000.0, "peak_mem_gib": 28.1}))
        w("peer_1b_ac.log", 'RESULT {"tok_s_gpu": 34000.0, "peak_mem_gib": 30.2}\n')
        w("gpu_tests.log", "[       OK ] A.B (1 ms)\n[  FAILED  ] C.D (2 ms)\n"
                           "[  PASSED  ] 1 test.\n[  FAILED  ] C.D\n")
        out = os.path.join(work, "speed.json")
        p = run(r, out)
        check(p.returncode == 0, f"the tool failed: {p.stderr}")
        if p.returncode == 0:
            rep = json.load(open(out))
            t = rep["targets"]
            fwd_flops = 4.0 * 4096 * 4096 * 128 * 32 / 2
            slow = 3.5 * fwd_flops / ((0.26 + 0.90) * 1e-3) / 1e12
            check(abs(t["attention_fwd_bwd_tflops"]["value"] - slow) < 1e-6,
                  f"fwd+bwd should be the slower run's {slow}, got {t['attention_fwd_bwd_tflops']}")
            check(t["attention_fwd_bwd_tflops"]["met"] is (slow >= 420), "fwd+bwd met flag")
            check(t["startup_s"] == {"goal": 3, "value": 0.4, "met": True}, f"start-up {t['startup_s']}")
            check(t["1b_tok_s"]["value"] == 56000.0 and t["1b_tok_s"]["met"], f"1b {t['1b_tok_s']}")
            check(abs(t["1b_ratio_to_fsdp2"]["value"] - 1.4) < 1e-12, "1b ratio: lower run / peer")
            check(t["1b_ac_tok_s"] == {"goal": 46000, "value": 45000.0, "met": False},
                  f"1b_ac {t['1b_ac_tok_s']}")
            check("3b_tok_s" not in t, "3b was not measured: no figure may be invented")
            check(rep["gpu"].startswith("NVIDIA H200"), "gpu name from gpu.txt")
            check(rep["gpu_tests"]["failed"] == ["C.D"] and rep["gpu_tests"]["passed"] == 1,
                  f"gpu tests {rep['gpu_tests']}")
            check("MISSED" in p.stdout and "1b_ac_tok_s" in p.stdout, "the printed table names misses")
        w("startup_2.log", "no such line\n")
        p = run(r, out)
        check(p.returncode != 0 and "startup_2.log has no start-up line" in p.stderr,
              f"a log without its line: rc {p.returncode}, {p.stderr!r}")
    for f in failures:
        print("FAILED:", f)
    print("speed_results selftest:", "ok" if not failures else f"{len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
