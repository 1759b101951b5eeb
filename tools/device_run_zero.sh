#!/usr/bin/env bash
# Runs on the 4-GPU machine (device tool, kind nvidia-h200-x4) over binaries staged by
# tools/device_build.sh: the ZeRO stages on GPUs. Part `stages`: every test, then the Llama-1B shape
# on 4 GPUs at stages 0-3 (and stage 3 with activation checkpointing): throughput and the measured
# peak per GPU for the memory estimator's table. Part `8b`: the Llama-3-8B shape at stage 3 beside
# the FSDP2 peer, and the optimizer benchmark beside torch (the same job in bf16 too). Part `8b2`:
# the 8B shape at stage 2 beside the peer's `fsdp2-zero2` mode (parameters kept gathered between
# forward and backward). Logs to $OUT, JSON into $OUT/raw-<part>.tgz.
# Usage: ZT_COMMIT=<sha> tools/device_run_zero.sh stages|8b|8b2
set -uo pipefail
source tools/device_env.sh
raw="$OUT/raw"
mkdir -p "$raw"
part="${1:-stages}"
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader | tee "$raw/gpu.txt"
launch() { timeout 300 "$bin/zerotrain" launch -n 4 -- "$@"; }
if [ "$part" = stages ]; then
  echo "== unit tests"
  "$bin/zerotrain_tests" --gtest_filter="${ZT_TEST_FILTER:-*}" --gtest_output="json:$raw/gtest.json" \
    > "$raw/tests.log" 2>&1
  echo "tests rc=$?"
  grep -E "^\[  (FAILED|PASSED) |tests ran" "$raw/tests.log" | head -20
  for z in 0 1 2 3; do
    echo "== Llama-1B, 4 GPUs, ZeRO-$z, seq 4096, mbs 2"
    launch "$bin/train_bench" --model 1b --seq 4096 --mbs 2 --zero-stage "$z" --commit "$commit" \
      --json "$raw/zero${z}_1b.json" 2>&1 | grep -E "RESULT|rror|failed" | cut -c1-600
  done
  echo "== Llama-1B, 4 GPUs, ZeRO-3 + activation checkpointing"
  launch "$bin/train_bench" --model 1b --seq 4096 --mbs 2 --zero-stage 3 --ac --commit "$commit" \
    --json "$raw/zero3_1b_ac.json" 2>&1 | grep -E "RESULT|rror|failed" | cut -c1-600
fi
if [ "$part" = 8b ]; then
  echo "== Llama-3-8B shape, 4 GPUs, ZeRO-3, seq 4096, mbs 1"
  launch "$bin/train_bench" --model 8b --seq 4096 --mbs 1 --zero-stage 3 --steps 6 --warmup 2 \
    --commit "$commit" --json "$raw/zero3_8b.json" 2>&1 | grep -E "RESULT|rror|failed" | cut -c1-600
  timeout 400 python3 -m torch.distributed.run --standalone --nproc_per_node=4 \
    .carry/dev/fsdp2_peer.py --model 8b --mode fsdp2 --mbs 1 2>&1 | grep RESULT | tee "$raw/peer_fsdp2_8b.txt"
  echo "== AdamW on 1e9 parameters, host CPU and GPU"
  timeout 300 python3 .carry/dev/torch_adamw_peer.py --n 1e9 --reps 5 > "$raw/torch_adamw.json" 2> "$raw/torch_adamw.err"
  cat "$raw/torch_adamw.json"
  OMP_PROC_BIND=spread OMP_PLACES=cores timeout 300 "$bin/optim_bench" --n 1e9 --reps 5 \
    --peer "$raw/torch_adamw.json" --commit "$commit" --json "$raw/optim.json" 2>&1 | tail -8
fi
if [ "$part" = 8b2 ]; then
  echo "== Llama-3-8B shape, 4 GPUs, ZeRO-2, seq 4096, mbs 1"
  launch "$bin/train_bench" --model 8b --seq 4096 --mbs 1 --zero-stage 2 --steps 6 --warmup 2 \
    --commit "$commit" --json "$raw/zero2_8b.json" 2>&1 | grep -E "RESULT|rror|failed" | cut -c1-600
  timeout 400 python3 -m torch.distributed.run --standalone --nproc_per_node=4 \
    .carry/dev/fsdp2_peer.py --model 8b --mode fsdp2-zero2 --mbs 1 2>&1 | grep -E "RESULT|Error" |
    tee "$raw/peer_fsdp2_zero2_8b.txt"
fi
tar czf "$OUT/raw-$part.tgz" -C "$OUT" raw && rm -rf "$raw"
echo "== done"
