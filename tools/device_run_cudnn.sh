#!/usr/bin/env bash
# Runs on the GPU machine (device tool): issue 31's deliverable 5, cuDNN attention through NVIDIA's
# cudnn-frontend (kernels/cuda/cudnn_attention.cpp), against the previous main in one call. Carry
# .carry: dev = this commit's binaries (tools/device_build.sh), base = the previous main's zerotrain,
# train_bench, kernel_bench and libzerotrain.so, and kjv.bin (the default job's tokens). In order,
# each step bounded so that the whole ends inside one 10-minute call:
#   1. zerotrain_tests' attention and cuDNN tests (gtest filter below);
#   2. kernel_bench's attention rows (causal 1x4096x32x128 bf16, cuDNN and ours): base, this commit,
#      base again;
#   3. train_bench, Llama-1B shape, seq 4096, micro-batch 2: base, this commit, base again;
#   4. the default job (bf16, 40 steps) of both builds, losses and written files compared bitwise;
#   5. the whole zerotrain_tests in the time left (ZT_DEADLINE_S after the start, default 540 s).
# Everything lands in $OUT/cudnn.tgz, packed after each step (the device tool brings back few
# files); the key lines go to stdout as well.
# ZT_CARRY names the carried folder (default .carry; a helper whose call sends another checkout puts
# dev/, base/ and kjv.bin under a folder of that checkout instead).
# Usage: ZT_COMMIT=<sha> ZT_BASE=<sha> [ZT_CARRY=.carry] tools/device_run_cudnn.sh
set -uo pipefail
start=$SECONDS
deadline="${ZT_DEADLINE_S:-540}"
source tools/device_env.sh
C="${ZT_CARRY:-.carry}"
for f in "$C/dev/lib/libopenblas.so.0" "$C/dev/lib/libzerotrain.so" "$C/base/lib/libzerotrain.so"; do
  [ -f "$f.xz" ] && [ ! -f "$f" ] && xz -dk "$f.xz"
done
bin="$PWD/$C/dev/bin"
res="$(mktemp -d)"
# The results so far, packed after every step: a run stopped at its limit still brings them back.
pack() { tar czf "$OUT/cudnn.tgz" -C "$res" .; }
new_env=(env LD_LIBRARY_PATH="$PWD/$C/dev/lib:$LD_LIBRARY_PATH")
old_env=(env LD_LIBRARY_PATH="$PWD/$C/base/lib:$PWD/$C/dev/lib:$LD_LIBRARY_PATH")
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$res/gpu.txt"
left() { echo $((deadline - (SECONDS - start))); }

echo "== 1. attention and cuDNN tests ($((SECONDS - start)) s)"
filter='*Cudnn*:*Attention*:*attention*:*AttentionMode*'
ZT_CUDNN_DEBUG=1 "${new_env[@]}" timeout 120 "$bin/zerotrain_tests" --gtest_filter="$filter" \
  --gtest_output="json:$res/tests_cudnn.json" > "$res/tests_cudnn.log" 2> "$res/tests_cudnn_debug.log"
echo "cudnn tests rc=$?"
grep -E "^\[  (FAILED|PASSED) |tests? ran" "$res/tests_cudnn.log" | head -20
grep -E "plan .* workspace" "$res/tests_cudnn_debug.log" | sort | uniq -c | sort -rn | head -8

pack
echo "== 2. attention 1x4096x32x128 causal bf16: base, this commit, base again ($((SECONDS - start)) s)"
for side in old new old2; do
  if [ $side = new ]; then run=("${new_env[@]}" "$bin/kernel_bench"); c="$commit"; else run=("${old_env[@]}" $C/base/bin/kernel_bench); c="${ZT_BASE:-base}"; fi
  ZT_CUDNN_DEBUG=1 timeout 100 "${run[@]}" --only attention --commit "$c" --json "$res/attention_$side.json" \
    > "$res/attention_$side.log" 2>&1
  echo "$side rc=$?"; grep -E "attention_(fwd|bwd) cudnn|cuDNN .* at run time|: plan |engine .* workspace" "$res/attention_$side.log" | head -6
  python3 -c "
import json; t=json.load(open('$res/attention_$side.json'))['targets']
print('  $side', {k: round(v['value'], 1) for k, v in t.items() if 'attention' in k})" 2>/dev/null
done

pack
echo "== 3. Llama-1B, seq 4096, mbs 2: base, this commit, base again ($((SECONDS - start)) s)"
for side in old new old2; do
  if [ $side = new ]; then run=("${new_env[@]}" "$bin/train_bench"); c="$commit"; else run=("${old_env[@]}" $C/base/bin/train_bench); c="${ZT_BASE:-base}"; fi
  timeout 120 "${run[@]}" --model 1b --seq 4096 --mbs 2 --commit "$c" --json "$res/train_1b_$side.json" \
    > "$res/train_1b_$side.log" 2>&1
  echo "$side rc=$?: $(tail -1 "$res/train_1b_$side.log")"
done

pack
if [ -f $C/kjv.bin ] && [ "$(left)" -gt 150 ]; then
  echo "== 4. default job, bf16, 40 steps: base vs this commit ($((SECONDS - start)) s)"
  for side in old new; do
    if [ $side = old ]; then run=("${old_env[@]}" $C/base/bin/zerotrain); else run=("${new_env[@]}" "$bin/zerotrain"); fi
    timeout 60 "${run[@]}" train --model assets/models/kjv-llama-4m/config.json --data $C/kjv.bin \
      --out "$res/job_$side" --device cuda --dtype bf16 --steps 40 --micro-batch 16 --seq-len 128 \
      --lr 3e-3 --warmup 20 --log-every 5 > "$res/job_$side.log" 2>&1 || echo "job $side failed"
    grep -i "attention" "$res/job_$side.log" | head -2
    python3 -c "
import json
for l in open('$res/job_$side/metrics.jsonl'):
    r=json.loads(l); print(json.dumps({k:r[k] for k in ('step','loss','lr','grad_norm')}))" > "$res/job_$side.losses"
    (cd "$res/job_$side" && sha256sum model/model.safetensors checkpoints/step-*/rank-*.safetensors) > "$res/job_$side.sha"
    rm -rf "$res/job_$side"
  done
  if cmp -s "$res/job_old.losses" "$res/job_new.losses" && cmp -s "$res/job_old.sha" "$res/job_new.sha"; then
    echo "job bf16: losses and files bitwise equal"; else echo "job bf16: DIFFER"; fi
fi

pack
budget=$(left)
if [ "$budget" -gt 30 ]; then
  echo "== 5. whole zerotrain_tests, at most $budget s ($((SECONDS - start)) s)"
  "${new_env[@]}" timeout "$budget" "$bin/zerotrain_tests" \
    --gtest_output="json:$res/tests_all.json" > "$res/tests_all.log" 2>&1
  echo "all tests rc=$? (124: stopped at the time limit)"
  grep -E "^\[  (FAILED|PASSED) |tests? ran|FAILED TEST" "$res/tests_all.log" | head -20
  echo "tests finished OK: $(grep -c '^\[       OK \]' "$res/tests_all.log"), failed: $(grep -c '^\[  FAILED  \]' "$res/tests_all.log")"
fi
pack && rm -rf "$res"
echo "done in $((SECONDS - start)) s"
