#!/usr/bin/env bash
# Runs on the GPU machine (through the device tool) from the repository root: builds with CUDA, runs
# every test (CUDA ones included), the self-check and the kernel benchmark, and writes logs and JSON
# to $OUT. Usage: ZT_COMMIT=<sha> tools/device_run.sh [bench-args...]
set -uo pipefail
OUT="${OUT:-$PWD/out}"
mkdir -p "$OUT"
commit="${ZT_COMMIT:-unknown}"
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv | tee "$OUT/gpu.csv"

echo "== build"
start=$(date +%s)
cmake -S . -B build-dev -G Ninja -DZT_CUDA=ON -DZT_SANITIZE= > "$OUT/build.log" 2>&1 &&
  cmake --build build-dev --parallel "$(nproc)" >> "$OUT/build.log" 2>&1
rc=$?
echo "build rc=$rc in $(( $(date +%s) - start )) s"
if [ $rc -ne 0 ]; then tail -40 "$OUT/build.log"; exit $rc; fi

echo "== tests"
ctest --test-dir build-dev --parallel 8 --timeout 600 --output-junit "$OUT/ctest.xml" > "$OUT/ctest.log" 2>&1
echo "ctest rc=$?"
grep -E "tests passed|tests failed|\*\*\*Failed|\*\*\*Exception|Timeout|SKIPPED|Not Run" "$OUT/ctest.log" | head -60

echo "== selfcheck"
build-dev/bin/zerotrain selfcheck 2>&1 | tee "$OUT/selfcheck.log" | tail -40

echo "== kernel bench"
build-dev/bin/kernel_bench --commit "$commit" --json "$OUT/kernels.json" "$@" > "$OUT/bench.log" 2>&1
echo "bench rc=$?"
sed -n '/^kernel  /,$p' "$OUT/bench.log"
