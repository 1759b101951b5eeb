#!/usr/bin/env bash
# On the GPU machine (carry .carry/dev and .carry/ft, see device_build.sh and
# bench/finetune_vs_trainer.py make-data): issue 19's fine-tune beside transformers' Trainer, and
# issue 16's measurement of what making page-locked memory costs a running loop (pinning_bench).
# Usage: ZT_COMMIT=<sha> tools/device_run_finetune.sh [finetune] [pinning]; results under $OUT.
set -uo pipefail
source tools/device_env.sh
parts=" ${*:-finetune pinning} "
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"

if [[ "$parts" == *" finetune "* ]]; then
  echo "== chat fine-tune: zerotrain beside transformers' Trainer"
  ZT_COMMIT="$commit" timeout 420 python3 .carry/ft/finetune_vs_trainer.py run --dir .carry/ft \
    --zerotrain "$bin/zerotrain" --work /tmp/zt_ft --device cuda \
    --json "$OUT/finetune_vs_trainer.json" --svg "$OUT/finetune_vs_trainer.svg" \
    > "$OUT/finetune.log" 2>&1
  echo "rc $?" >> "$OUT/finetune.log"
  grep -v "^{'loss'" "$OUT/finetune.log" | tail -14
  cp /tmp/zt_ft/logs/*.log "$OUT/" 2>/dev/null
fi

if [[ "$parts" == *" pinning "* ]]; then
  echo "== making 16 GiB of page-locked memory beside a running loop"
  timeout 240 "$bin/pinning_bench" --gib 16 --json "$OUT/pinning.json" 2>&1 | tee "$OUT/pinning.log"
fi
