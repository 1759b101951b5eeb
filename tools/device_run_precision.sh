#!/usr/bin/env bash
# Runs on the 4-GPU machine (device tool, kind nvidia-h200-x4) over binaries staged by
# tools/device_build.sh: every test (the CUDA ones: LAMB, low-precision Adam, amsgrad, fp16 trainer,
# memory cap), the multi-rank tests on 4 GPUs (NCCL communication dtypes, ZeRO parity), `selfcheck`
# on the GPU, then training on 4 GPUs in fp16 (loss scaler), bf16 low precision and bf16
# communication at every ZeRO stage, the out-of-memory message of GPT-2 XL under a 24 GiB cap (one
# GPU, then two, then the advised flags), and the optimizer benchmarks (CPU AdamW beside torch's on
# the 64-core host, GPU LAMB, low precision).
# Part `recheck`: only the GPT-2 XL messages and the advised run, and the tests named by
# ZT_TEST_FILTER. Logs to stdout, JSON and logs into $OUT/raw.tgz.
# Usage: ZT_COMMIT=<sha> tools/device_run_precision.sh [all|recheck]
set -uo pipefail
source tools/device_env.sh
raw="$OUT/raw"
mkdir -p "$raw"
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader | tee "$raw/gpu.txt"
part="${1:-all}"

echo "== unit tests"
"$bin/zerotrain_tests" --gtest_filter="${ZT_TEST_FILTER:-*}" --gtest_output="json:$raw/gtest.json" \
  > "$raw/tests.log" 2>&1
echo "tests rc=$?"
grep -E "^\[  (FAILED|PASSED) |tests ran|FAILED  \]" "$raw/tests.log" | head -30
work="$OUT/work"; mkdir -p "$work"
"$bin/zerotrain" data prepare --tokenizer assets/tokenizers/kjv-bpe-4096/tokenizer.json \
  --input docs/ARCHITECTURE.md README.md docs/LAUNCH.md --output "$work/tok.bin" > /dev/null
if [ "$part" = all ]; then
echo "== multi-rank tests on 4 GPUs"
timeout 300 mpirun -n 4 --bind-to none -x OMP_NUM_THREADS=4 "$bin/comm_mpi_tests" > "$raw/mpi_np4.log" 2>&1
echo "np4 rc=$?"
grep -aE "\[  (FAILED|PASSED) \]|FAILED  \]" "$raw/mpi_np4.log" | sort | uniq -c | head -20
echo "== selfcheck on the GPU"
timeout 120 "$bin/zerotrain" selfcheck --device cuda > "$raw/selfcheck.log" 2>&1
echo "selfcheck rc=$?"; tail -3 "$raw/selfcheck.log"

model=assets/models/kjv-llama-4m/config.json
train4() {  # name, then flags
  local name="$1"; shift
  timeout 120 "$bin/zerotrain" train --model "$model" --data "$work/tok.bin" --out "$work/$name" \
    --device cuda --nproc 4 --steps 20 --log-every 5 --seq-len 128 --micro-batch 4 "$@" \
    > "$raw/train_$name.log" 2>&1
  echo "$name rc=$? last: $(grep -aE 'loss' "$raw/train_$name.log" | tail -1 | cut -c1-200)"
  cp "$work/$name/metrics.jsonl" "$raw/metrics_$name.jsonl" 2>/dev/null
}
echo "== training on 4 GPUs: fp16, bf16 low precision, bf16 communication, stages 0-3"
for z in 0 1 2 3; do
  train4 "fp16_z$z" --dtype f16 --zero-stage "$z"
  train4 "lowp_z$z" --dtype bf16 --precision low --lr 1e-3 --zero-stage "$z"
  train4 "bf16comm_z$z" --dtype bf16 --comm-dtype bf16 --grad-accum-dtype bf16 --grad-accum 2 --zero-stage "$z"
done
fi
echo "== GPT-2 XL, micro-batch 1, seq 1024, ZeRO-0 under a 24 GiB cap"
xl() {  # name, then flags
  local name="$1"; shift
  timeout 150 "$bin/zerotrain" train --model assets/models/gpt2-xl/config.json --data "$work/tok.bin" \
    --out "$work/$name" --device cuda --dtype bf16 --seq-len 1024 --steps 3 \
    --log-every 1 --gpu-memory-cap 24GiB "$@" > "$raw/$name.log" 2>&1
  echo "$name rc=$?"; grep -aE "out of memory|memory at|error" "$raw/$name.log" | head -4 | cut -c1-700
}
xl xl_1gpu --micro-batch 1
xl xl_2gpu --nproc 2 --micro-batch 1
advice=$(grep -aoE "fits in [^:]*: [^;]*--zero-stage [0-3][^;]*" "$raw/xl_2gpu.log" | head -1 | grep -oE -- "--zero-stage [0-3]( --[a-z-]+( [0-9]+)?)*")
echo "advised: $advice"
[ -n "$advice" ] && xl xl_2gpu_advised --nproc 2 $advice
if [ "$part" = all ]; then
echo "== optimizer benchmarks on the GPU (LAMB, low precision)"
timeout 300 python3 .carry/dev/torch_adamw_peer.py --n 1e9 --reps 5 > "$raw/torch_adamw.json" 2> "$raw/torch_adamw.err"
cat "$raw/torch_adamw.json"
OMP_PROC_BIND=spread OMP_PLACES=cores timeout 300 "$bin/optim_bench" --n 1e9 --reps 5 \
  --peer "$raw/torch_adamw.json" --commit "$commit" --json "$raw/optim.json" 2>&1 | tail -12
[ -x "$bin/optim_lowp_bench" ] && timeout 120 "$bin/optim_lowp_bench" --n 1e9 --json "$raw/optim_lowp.json" 2>&1 | tail -8
fi
tar czf "$OUT/raw.tgz" -C "$OUT" raw && rm -rf "$raw" "$work"
echo "== done"
