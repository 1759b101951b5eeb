#!/usr/bin/env bash
# Runs on the GPU machine (device tool) over binaries staged by tools/device_build.sh: every test,
# the PyTorch parity check (tools/parity/parity.py) and the single-GPU Llama-1B training throughput
# beside the PyTorch FSDP2 peer, with and without activation checkpointing. Results go to $OUT.
# Usage: ZT_COMMIT=<sha> tools/device_run_models.sh
set -uo pipefail
source tools/device_env.sh
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"

echo "== tests"
"$bin/zerotrain_tests" --gtest_output="json:$OUT/gtest.json" > "$OUT/tests.log" 2>&1
echo "tests rc=$?"
grep -E "^\[  (FAILED|PASSED) |tests ran" "$OUT/tests.log" | head -30

echo "== parity with PyTorch"
python3 tools/parity/parity.py --runner "$bin/parity_runner" --device cuda --commit "$commit" \
  --out "$OUT/parity_cuda.json" 2>&1 | tail -8
python3 tools/parity/parity.py --runner "$bin/parity_runner" --device cpu --commit "$commit" \
  --out "$OUT/parity_cpu.json" 2>&1 | tail -8

echo "== Llama-1B, seq 4096, mbs 2, one GPU"
"$bin/train_bench" --model 1b --seq 4096 --mbs 2 --commit "$commit" --json "$OUT/train_1b.json" 2>&1 | tail -3
"$bin/train_bench" --model 1b --seq 4096 --mbs 2 --ac --commit "$commit" --json "$OUT/train_1b_ac.json" 2>&1 | tail -1
python3 -m torch.distributed.run --standalone --nproc_per_node=1 .carry/dev/fsdp2_peer.py --model 1b --mbs 2 \
  2>&1 | grep RESULT | tee "$OUT/peer_1b.txt"
