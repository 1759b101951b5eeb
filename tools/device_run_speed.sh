#!/usr/bin/env bash
# Runs on the GPU machine (device tool, carry [".carry/dev"] from tools/device_build.sh): issue 14's
# table of single-GPU speed in one call, each figure beside its peer measured in the same call:
#   attention  kernel_bench's causal 1x4096x32x128 bf16 rows (cuDNN's deterministic backward) three
#              times, around two runs of torch's cuDNN attention (bench/attention_peer.py);
#   start-up   zerotrain train on the Llama-3.2-1B shape from launch to the first step, twice, with
#              a token file of random ids made beforehand;
#   steps      train_bench 1B mbs 2, 1B mbs 2 with activation checkpointing, 3B mbs 1 (seq 4096),
#              each run before and after the FSDP2 peer (fsdp2_peer.py);
#   tests      the CUDA tests of attention, cuDNN, parity, the block runner and nn (230 s at most).
# Then tools/speed_results.py gathers it all into $OUT/speed.json (figures, targets, peers).
# Usage: ZT_COMMIT=<sha> tools/device_run_speed.sh
set -uo pipefail
source tools/device_env.sh
R="$OUT/r"
mkdir -p "$R"
exec > >(tee "$R/log.txt") 2>&1
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$R/gpu.txt"

echo "== attention: ours, the peer, ours, the peer, ours"
for i in 1 2 3; do
  "$bin/kernel_bench" --only attention --commit "$commit" --json "$R/kb_$i.json" | grep -E "_cudnn_tflops"
  [ "$i" = 3 ] || python3 bench/attention_peer.py --json "$R/peer_$i.json" 2>/dev/null
done

echo "== start-up: zerotrain train, Llama-3.2-1B shape, token file ready"
python3 - /tmp/zt_speed_tokens.bin <<'PY'
# A version 1 token file of 2 Mi random ids below 128256 (uint32), by the bad-input corpus's writer.
import random, sys
sys.path.insert(0, "tests/bad_inputs")
from fixtures import token_file
random.seed(7)
ids = [random.randrange(128256) for _ in range(1 << 21)]
with open(sys.argv[1], "wb") as f:
    f.write(token_file(ids, token_bytes=4, vocab_size=128256))
PY
for i in 1 2; do
  /usr/bin/time -f "wall %e s" "$bin/zerotrain" train --model tests/fixtures/estimate/llama3.2_1b.json \
    --data /tmp/zt_speed_tokens.bin --out "/tmp/zt_speed_$i" --steps 3 --seq-len 4096 \
    --micro-batch 2 --device cuda --dtype bf16 --init random --log-every 1 > "$R/startup_$i.log" 2>&1
  echo "rc $?"
  grep -E "start-up \(" "$R/startup_$i.log"
  rm -rf "/tmp/zt_speed_$i"
done

echo "== steps beside FSDP2"
step_case() {  # name, then the flags both take
  local name=$1
  shift
  for run in a peer b; do
    if [ "$run" = peer ]; then
      python3 -m torch.distributed.run --standalone --nproc_per_node=1 .carry/dev/fsdp2_peer.py \
        "$@" --seq 4096 > "$R/peer_$name.log" 2>&1
      grep RESULT "$R/peer_$name.log"
    else
      "$bin/train_bench" "$@" --seq 4096 --steps 10 --warmup 3 --commit "$commit" \
        --json "$R/zt_${name}_$run.json" | tail -2 | head -1
    fi
  done
}
step_case 1b --model 1b --mbs 2
step_case 1b_ac --model 1b --mbs 2 --ac
step_case 3b --model 3b --mbs 1

echo "== CUDA tests: attention, cuDNN, parity, block runner, nn"
SECONDS=0
timeout 230 "$bin/zerotrain_tests" \
  --gtest_filter='*Cuda*:*Cudnn*:*Attention*:*Parity*:*BlockRunner*:Nn*' > "$R/gpu_tests.log" 2>&1
echo "rc $? in ${SECONDS}s"
grep -E '^\[  (PASSED|FAILED) |tests ran' "$R/gpu_tests.log"

python3 tools/speed_results.py "$R" --commit "$commit" --out "$OUT/speed.json"
tar -C "$OUT" -czf "$OUT/speed_logs.tgz" r && rm -rf "$R"
