#!/usr/bin/env bash
# Runs on the GPU machine (device tool): issue 32's bf16 drift benchmark, bench/bf16_drift.py, over
# the zerotrain staged by tools/device_build.sh (.carry/dev, this commit) and the machine's own
# PyTorch: every family, both attention paths (cuDNN, ZT_ATTENTION=native), the PyTorch f32,
# autocast and DeepSpeed-arrangement runs in the same call. Results ($OUT): bf16_drift_h200.json
# (written after each family, so a run cut short keeps what it did), bf16_drift.log, gpu.txt.
# Usage: ZT_COMMIT=<sha> tools/device_run_drift.sh [more bench/bf16_drift.py flags, e.g. --seeds 5]
set -uo pipefail
source tools/device_env.sh
[ -f .carry/dev/lib/libzerotrain.so.xz ] && [ ! -f .carry/dev/lib/libzerotrain.so ] && xz -dk .carry/dev/lib/libzerotrain.so.xz
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
python3 bench/bf16_drift.py --zerotrain "$bin/zerotrain" --device cuda --commit "$commit" \
  --json "$OUT/bf16_drift_h200.json" "$@" 2>&1 | tee "$OUT/bf16_drift.log"
