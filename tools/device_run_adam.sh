#!/usr/bin/env bash
# Runs on the 4-GPU machine (device tool, kind nvidia-h200-x4) over binaries staged by
# tools/device_build.sh: the Adam variants of the trainer (L2 decay, amsgrad, no bias correction)
# on the GPU. The GPU unit tests of the optimizers and trainer; PyTorch parity on the GPU of plain
# AdamW and of torch.optim.Adam(weight_decay, amsgrad) (tools/parity/parity.py); then training on 4
# GPUs with L2 + amsgrad at ZeRO stages 0-3, whose losses must agree. Logs to stdout; the parity
# report and logs into $OUT/raw.tgz.
# Usage: ZT_COMMIT=<sha> tools/device_run_adam.sh
set -uo pipefail
source tools/device_env.sh
raw="$OUT/raw"
mkdir -p "$raw"
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader | tee "$raw/gpu.txt"

echo "== GPU unit tests: optimizers, trainer, Adam variants"
"$bin/zerotrain_tests" --gtest_filter='OptimCuda*:TrainCuda*:TrainerFp16Cuda*:*AdamVariant*:*Adam*Cuda*' \
  > "$raw/tests.log" 2>&1
echo "tests rc=$?"
grep -aE "^\[  (FAILED|PASSED|SKIPPED) |tests ran|FAILED  \]" "$raw/tests.log" | head -20

echo "== PyTorch parity on the GPU: AdamW and L2 + amsgrad Adam"
timeout 300 python3 tools/parity/parity.py --runner "$bin/parity_runner" --device cuda --commit "$commit" \
  --families llama-tied,llama-tied-adam-l2-amsgrad --out "$raw/parity_adam_cuda.json" > "$raw/parity.log" 2>&1
echo "parity rc=$?"; tail -6 "$raw/parity.log"

work="$OUT/work"; mkdir -p "$work"
"$bin/zerotrain" data prepare --tokenizer assets/tokenizers/kjv-bpe-4096/tokenizer.json \
  --input docs/ARCHITECTURE.md README.md docs/LAUNCH.md --output "$work/tok.bin" > /dev/null
echo "== training on 4 GPUs, L2 Adam + amsgrad, stages 0-3"
for z in 0 1 2 3; do
  timeout 120 "$bin/zerotrain" train --model assets/models/kjv-llama-4m/config.json --data "$work/tok.bin" \
    --out "$work/z$z" --device cuda --nproc 4 --steps 20 --log-every 5 --seq-len 128 --micro-batch 4 \
    --dtype bf16 --grad-accum 2 --weight-decay 0.1 --weight-decay-mode l2 --amsgrad --zero-stage "$z" \
    > "$raw/train_z$z.log" 2>&1
  echo "z$z rc=$? losses: $(grep -ao '"loss":[^,]*' "$work/z$z/metrics.jsonl" | cut -d: -f2 | tr '\n' ' ')"
  cp "$work/z$z/metrics.jsonl" "$raw/metrics_z$z.jsonl" 2>/dev/null
done
tar czf "$OUT/raw.tgz" -C "$OUT" raw && rm -rf "$raw" "$work"
echo "== done"
