#!/usr/bin/env bash
# Runs on the GPU machine (device tool): a renovation (issues 13, 31) must change no result and no
# speed. Over the binaries staged by tools/device_build.sh (.carry/dev, this commit) and the previous
# main's zerotrain + train_bench (.carry/base): every test, the PyTorch parity check on CUDA, the
# default job's losses and written files from both builds (f32 and bf16, compared bitwise), and the
# Llama-1B single-GPU throughput of both builds in the same call. Results go to $OUT.
# Usage: ZT_COMMIT=<sha> ZT_BASE=<sha> tools/device_run_renovation.sh check|bench|attention
# (check = tests, parity, default job; bench = the 1B throughput; attention = kernel_bench's causal
# 1x4096x32x128 bf16 attention rows of both builds, and, when .carry/cfe/sdpa_check is carried, the
# same shape through NVIDIA's cudnn-frontend in the same call, for issue 31's keep-or-replace rule).
set -uo pipefail
source tools/device_env.sh
base_lib="$PWD/.carry/base/lib"
[ -f "$base_lib/libzerotrain.so.xz" ] && [ ! -f "$base_lib/libzerotrain.so" ] && xz -dk "$base_lib/libzerotrain.so.xz"
[ -f .carry/dev/lib/libzerotrain.so.xz ] && [ ! -f .carry/dev/lib/libzerotrain.so ] && xz -dk .carry/dev/lib/libzerotrain.so.xz
new_env=(env LD_LIBRARY_PATH="$PWD/.carry/dev/lib:$LD_LIBRARY_PATH")
old_env=(env LD_LIBRARY_PATH="$base_lib:$LD_LIBRARY_PATH")
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
phase="${1:-check}"

if [ "$phase" = check ]; then

echo "== tests"
"${new_env[@]}" "$bin/zerotrain_tests" --gtest_output="json:$OUT/gtest.json" > "$OUT/tests.log" 2>&1
echo "tests rc=$?"
grep -E "^\[  (FAILED|PASSED) |tests ran" "$OUT/tests.log" | head -30

echo "== parity with PyTorch (CUDA)"
"${new_env[@]}" python3 tools/parity/parity.py --runner "$bin/parity_runner" --device cuda --commit "$commit" \
  --out "$OUT/parity_cuda.json" 2>&1 | tail -4

echo "== default job, 40 steps, previous main vs this commit"
for dt in f32 bf16; do
  for side in old new; do
    if [ $side = old ]; then run=("${old_env[@]}" .carry/base/bin/zerotrain); else run=("${new_env[@]}" "$bin/zerotrain"); fi
    "${run[@]}" train --model assets/models/kjv-llama-4m/config.json --data .carry/kjv.bin --out "$OUT/job_${dt}_$side" \
      --device cuda --dtype $dt --steps 40 --micro-batch 16 --seq-len 128 --lr 3e-3 --warmup 20 --log-every 5 \
      > "$OUT/job_${dt}_$side.log" 2>&1 || echo "job $dt $side failed"
    python3 -c "
import json,sys
for l in open('$OUT/job_${dt}_$side/metrics.jsonl'):
    r=json.loads(l); print(json.dumps({k:r[k] for k in ('step','loss','lr','grad_norm')}))" > "$OUT/job_${dt}_$side.losses"
    (cd "$OUT/job_${dt}_$side" && sha256sum model/model.safetensors checkpoints/step-*/rank-*.safetensors) > "$OUT/job_${dt}_$side.sha"
    rm -f "$OUT/job_${dt}_$side"/model/*.safetensors "$OUT/job_${dt}_$side"/checkpoints/step-*/*.safetensors
  done
  if cmp -s "$OUT/job_${dt}_old.losses" "$OUT/job_${dt}_new.losses" && cmp -s "$OUT/job_${dt}_old.sha" "$OUT/job_${dt}_new.sha"; then
    echo "job $dt: losses and files bitwise equal"; else echo "job $dt: DIFFER"; fi
done

fi

if [ "$phase" = bench ]; then
echo "== Llama-1B, seq 4096, mbs 2, one GPU: previous main, this commit, previous main again"
"${old_env[@]}" .carry/base/bin/train_bench --model 1b --seq 4096 --mbs 2 --commit "${ZT_BASE:-base}" --json "$OUT/train_1b_old.json" 2>&1 | tail -1
"${new_env[@]}" "$bin/train_bench" --model 1b --seq 4096 --mbs 2 --commit "$commit" --json "$OUT/train_1b_new.json" 2>&1 | tail -1
"${old_env[@]}" .carry/base/bin/train_bench --model 1b --seq 4096 --mbs 2 --commit "${ZT_BASE:-base}" --json "$OUT/train_1b_old2.json" 2>&1 | tail -1
fi

if [ "$phase" = attention ]; then
echo "== attention 1x4096x32x128 causal bf16: previous main, this commit, previous main again"
for side in old new old2; do
  if [ $side = new ]; then run=("${new_env[@]}" "$bin/kernel_bench"); c="$commit"; else run=("${old_env[@]}" .carry/base/bin/kernel_bench); c="${ZT_BASE:-base}"; fi
  timeout 180 "${run[@]}" --only attention --commit "$c" --json "$OUT/attention_$side.json" 2>&1 | grep -E "_cudnn_tflops|cudnn" | head -6
done
if [ -x .carry/cfe/sdpa_check ]; then
  echo "== cudnn-frontend 1.32 SDPA (heuristics choice, deterministic backward), same shape (8 kv heads)"
  nvrtc="$(dirname "$(find / -name 'libnvrtc.so.13*' 2>/dev/null | head -1)")"
  for i in 1 2 3; do
    env LD_LIBRARY_PATH="$nvrtc:$LD_LIBRARY_PATH" timeout 120 .carry/cfe/sdpa_check 8 2>&1 | tee -a "$OUT/cudnn_frontend.log" | tail -3
  done
fi
fi

