#!/usr/bin/env bash
# Runs on the GPU machine (device tool): issue 32's kernel check. Over the binaries staged by
# tools/device_build.sh (.carry/dev): the bf16 gradient accuracy of cuDNN attention against our
# kernels over GQA ratios 1-8 (tests/kernels/test_attention_cudnn_gqa_accuracy.cpp, which prints
# each case's errors), the head-group kernels' tests, the cuDNN/attention tests, and kernel_bench's
# attention rows (causal 1x4096x32x128 bf16, 8 kv heads), each for the modes named in
# ZT_GQA_MODES (values of ZT_CUDNN_GQA; default "default"); then, in the time left before
# ZT_DEADLINE_S (default 240), every CUDA test of zerotrain_tests. Results to $OUT.
# Usage: ZT_COMMIT=<sha> [ZT_GQA_MODES="default expand"] [ZT_DEADLINE_S=240] tools/device_run_gqa.sh
set -uo pipefail
start=$SECONDS
source tools/device_env.sh
[ -f .carry/dev/lib/libzerotrain.so.xz ] && [ ! -f .carry/dev/lib/libzerotrain.so ] && xz -dk .carry/dev/lib/libzerotrain.so.xz
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
for mode in ${ZT_GQA_MODES:-default}; do
  if [ "$mode" = default ]; then m=(env -u ZT_CUDNN_GQA); else m=(env ZT_CUDNN_GQA="$mode"); fi
  echo "== $mode: accuracy and attention tests ($((SECONDS - start)) s)"
  "${m[@]}" timeout 200 "$bin/zerotrain_tests" \
    --gtest_filter='*GqaAccuracy*:*HeadGroups*' \
    --gtest_output="json:$OUT/tests_gqa_$mode.json" > "$OUT/tests_gqa_$mode.log" 2>&1
  echo "tests rc=$?"
  grep -E "^\[  (FAILED|PASSED) |tests? ran|\[gqa accuracy\]" "$OUT/tests_gqa_$mode.log" | head -40
  for rep in 1 2; do
    "${m[@]}" timeout 100 "$bin/kernel_bench" --only attention --commit "$commit" \
      --json "$OUT/attention_${mode}_$rep.json" > "$OUT/attention_${mode}_$rep.log" 2>&1
    python3 -c "
import json; t=json.load(open('$OUT/attention_${mode}_$rep.json'))['targets']
print('  $mode $rep', {k: round(v['value'], 1) for k, v in t.items() if 'attention' in k})" 2>/dev/null
  done
done
left=$(( ${ZT_DEADLINE_S:-240} - (SECONDS - start) ))
if [ "$left" -gt 20 ]; then
  echo "== every CUDA test, at most $left s ($((SECONDS - start)) s)"
  timeout "$left" "$bin/zerotrain_tests" --gtest_filter='*Cuda*:*Cudnn*:*Gpu*:*GPU*:*Nccl*:*Attention*' \
    --gtest_output="json:$OUT/tests_cuda.json" > "$OUT/tests_cuda.log" 2>&1
  echo "cuda tests rc=$? (124: stopped at the time limit)"
  grep -E "^\[  (FAILED|PASSED) |tests? ran|FAILED TEST" "$OUT/tests_cuda.log" | head -20
  echo "finished OK: $(grep -c '^\[       OK \]' "$OUT/tests_cuda.log"), skipped: $(grep -c '^\[  SKIPPED \]' "$OUT/tests_cuda.log"), failed: $(grep -c '^\[  FAILED  \]' "$OUT/tests_cuda.log")"
fi
echo "done in $((SECONDS - start)) s"
