#!/usr/bin/env bash
# Runs on the GPU machine (device tool) from the repository root, over binaries staged by
# tools/device_build.sh in .carry/dev: every test (CUDA ones included), the self-check and the kernel
# benchmark; logs and JSON go to $OUT. Usage: ZT_COMMIT=<sha> tools/device_run.sh [bench-args...]
set -uo pipefail
source tools/device_env.sh
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"

echo "== tests"
"$bin/zerotrain_tests" --gtest_output="json:$OUT/gtest.json" > "$OUT/tests.log" 2>&1
echo "tests rc=$?"
grep -E "^\[  (FAILED|PASSED|SKIPPED) |tests ran" "$OUT/tests.log" | head -40

echo "== selfcheck"
"$bin/zerotrain" selfcheck > "$OUT/selfcheck.log" 2>&1
echo "selfcheck rc=$?"
grep -E "FAILED|checks passed" "$OUT/selfcheck.log"

echo "== kernel bench"
"$bin/kernel_bench" --commit "$commit" --json "$OUT/kernels.json" "$@" > "$OUT/bench.log" 2>&1
echo "bench rc=$?"
sed -n '/^kernel  /,$p' "$OUT/bench.log"
