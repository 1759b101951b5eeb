#!/usr/bin/env bash
# On the GPU machine (carry .carry/dev and .carry/kjv.bin, see device_build.sh): issue 16's
# measurements and the GPU tests of what changed with them.
#   tests  every case of zerotrain_tests (the CUDA ones run here: kernels against their CPU
#          references, the trainer's checkpoints, evaluation and packed rows on the GPU), the
#          selfcheck, and kernel_bench's attention rows
#   ckpt   sharded checkpoints of the 1B and 3B shapes (bf16, one GPU): start-up, the time an
#          asynchronous save blocks training against the device-to-host copy, the background
#          write rate against the disk's raw write rate measured here (dd, fsync), a resume's
#          read against the raw read rate (dd, O_DIRECT), the cost of --checkpoint-weights, and consolidation's peak RSS;
#          the resume reads its shard from a dropped page cache, beside dd's O_DIRECT read of that file
#   load3b the 3B shape's checkpoint (45 GB) read back and verified by `checkpoint inspect --verify`
#          (the resume's read and checksum path, io/direct_file_reader.h) from a dropped page cache,
#          against dd's O_DIRECT read of the same file, the cache dropped before each: GB/s and the
#          ratio, in $OUT/load3b.json
#   firststeps  the first 20 steps of the 1B shape by train_bench (no checkpoint) and by zerotrain
#          train (its save buffers made in the background from the start), step by step
#   hf     tools/parity/check_consolidate.py with zerotrain's forward on the GPU: consolidated
#          checkpoints load in the machine's transformers with the same logits
# Usage: ZT_COMMIT=<sha> tools/device_run_checkpoint.sh [tests] [ckpt] [load3b] [firststeps] [hf]; results
# under $OUT.
set -uo pipefail
source tools/device_env.sh
parts=" ${*:-tests ckpt hf} "
work=/tmp/zt_ckpt
rm -rf "$work" && mkdir -p "$work"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
df -B1 --output=avail,target "$work" | tail -1 | tee "$OUT/disk.txt"

drop_caches() {  # so that the next read comes from the disk
  sync
  if echo 3 > /proc/sys/vm/drop_caches 2>/dev/null; then echo "page cache dropped"
  else echo "page cache NOT dropped (not permitted): the reads below may come from memory"; fi
}
# dd's O_DIRECT read of $1 from a dropped cache; prints its line and leaves GB/s in $dd_gbps.
dd_read() {
  drop_caches
  local line
  line=$(dd if="$1" of=/dev/null bs=64M iflag=direct 2>&1 | tail -1)
  echo "dd iflag=direct bs=64M: $line" | tee "$OUT/$2.txt"
  dd_gbps=$(echo "$line" | awk -F'[ ,]+' '{for (i = 1; i < NF; ++i) if ($(i + 1) == "s") s = $i;
    printf "%.3f", $1 / s / 1e9}')
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }

if [[ "$parts" == *" tests "* ]]; then
  echo "== CUDA tests"
  ZT_SOURCE_DIR="$PWD" timeout 300 "$bin/zerotrain_tests" --gtest_brief=1 > "$OUT/cuda_tests.log" 2>&1
  echo "rc $?" >> "$OUT/cuda_tests.log"
  grep -E "PASSED|FAILED|SKIPPED \]|rc " "$OUT/cuda_tests.log" | tail -20
  timeout 120 "$bin/zerotrain" selfcheck > "$OUT/selfcheck.log" 2>&1
  echo "rc $?" >> "$OUT/selfcheck.log"
  tail -5 "$OUT/selfcheck.log"
  timeout 120 "$bin/kernel_bench" --only attention --commit "${ZT_COMMIT:-unknown}" \
    --json "$OUT/kernels_attention.json" > "$OUT/kernels_attention.log" 2>&1
  grep -i "attention" "$OUT/kernels_attention.log" | head -12
fi

if [[ "$parts" == *" ckpt "* ]]; then
  echo "== raw disk write: 8 GiB, dd with fsync"
  dd if=/dev/zero of="$work/raw.bin" bs=64M count=128 conv=fsync 2>&1 | tail -1 | tee "$OUT/raw_write.txt"
  echo "== raw disk read: the same 8 GiB, dd with O_DIRECT (not from the page cache)"
  dd if="$work/raw.bin" of=/dev/null bs=64M iflag=direct 2>&1 | tail -1 | tee "$OUT/raw_read.txt"
  rm -f "$work/raw.bin"
  cfg1=tests/fixtures/configs/llama3.2_1b_instruct.json
  cfg3="$work/llama3.2_3b.json"
  python3 - "$cfg1" "$cfg3" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c.update(hidden_size=3072, intermediate_size=8192, num_hidden_layers=28, num_attention_heads=24,
         num_key_value_heads=8, head_dim=128)
json.dump(c, open(sys.argv[2], "w"))
PY
  run() {  # name, then train flags
    local name=$1; shift
    /usr/bin/time -v "$bin/zerotrain" train --init random --data .carry/kjv.bin --device cuda \
      --dtype bf16 --log-every 5 --out "$work/$name" "$@" > "$OUT/$name.log" 2> "$OUT/$name.err"
    echo "rc $?" >> "$OUT/$name.log"
    grep -E "start-up|checkpoint saves|resumed|rc |tokens/s|Maximum resident" "$OUT/$name.log" "$OUT/$name.err" | cut -c1-260
  }
  echo "== 1B: 60 steps of seq 4096 x 2, an asynchronous save every 20 steps (the first allocates"
  echo "   the page-locked host buffers, the later ones reuse them)"
  run ckpt_1b --model "$cfg1" --seq-len 4096 --micro-batch 2 --steps 60 --save-every 20 --keep-checkpoints 1
  du -sb "$work/ckpt_1b/checkpoints" | tee -a "$OUT/ckpt_1b.log"
  echo "== 1B: the same with --sync-save"
  run ckpt_1b_sync --model "$cfg1" --seq-len 4096 --micro-batch 2 --steps 24 --save-every 12 \
    --keep-checkpoints 1 --sync-save
  rm -rf "$work/ckpt_1b_sync"
  echo "== 1B: the same with --checkpoint-weights (the HF weights in every checkpoint)"
  run ckpt_1b_weights --model "$cfg1" --seq-len 4096 --micro-batch 2 --steps 24 --save-every 12 \
    --keep-checkpoints 1 --checkpoint-weights
  ls -la "$work/ckpt_1b_weights/checkpoints/step-00000024/model" | tee -a "$OUT/ckpt_1b_weights.log"
  rm -rf "$work/ckpt_1b_weights"
  echo "== 1B: resume (reads the shard from a dropped page cache), 2 more steps; dd's O_DIRECT read"
  echo "   of the same shard file first"
  shard_1b=$(ls "$work"/ckpt_1b/checkpoints/step-*/rank-00000-of-*.safetensors | tail -1)
  dd_read "$shard_1b" ckpt_1b_dd_read
  drop_caches
  run ckpt_1b_resume --model "$cfg1" --seq-len 4096 --micro-batch 2 --steps 62 --keep-checkpoints 1 \
    --resume "$work/ckpt_1b"
  read_s=$(grep -oE "shard read in [0-9.]+ s" "$OUT/ckpt_1b_resume.log" | grep -oE "[0-9.]+" | head -1)
  bytes_1b=$(stat -c %s "$shard_1b")
  read_gbps=$(awk -v b="$bytes_1b" -v s="${read_s:-0}" 'BEGIN { printf "%.3f", (s > 0 ? b / s / 1e9 : 0) }')
  echo "resume read: $bytes_1b bytes in ${read_s:-?} s = $read_gbps GB/s; dd $dd_gbps GB/s;" \
    "ratio $(ratio "$read_gbps" "$dd_gbps")" | tee -a "$OUT/ckpt_1b_resume.log"
  rm -rf "$work/ckpt_1b_resume"
  echo "== 1B: consolidate to bf16 (peak RSS)"
  /usr/bin/time -v "$bin/zerotrain" checkpoint consolidate "$work/ckpt_1b" "$work/hf_1b" \
    > "$OUT/consolidate_1b.log" 2>&1
  echo "rc $?" >> "$OUT/consolidate_1b.log"
  grep -E "wrote|Maximum resident|Elapsed|rc " "$OUT/consolidate_1b.log"
  cmp "$work/hf_1b/model.safetensors" "$work/ckpt_1b/model/model.safetensors" \
    && echo "consolidated weights equal <out>/model's" | tee -a "$OUT/consolidate_1b.log"
  rm -rf "$work/ckpt_1b" "$work/hf_1b"
  echo "== 3B: 8 steps of seq 4096 x 1 and the final save (two 3B checkpoints would not fit the disk)"
  run ckpt_3b --model "$cfg3" --seq-len 4096 --micro-batch 1 --steps 8 --keep-checkpoints 1
  du -sb "$work/ckpt_3b/checkpoints" | tee -a "$OUT/ckpt_3b.log"
  rm -rf "$work/ckpt_3b"
fi

if [[ "$parts" == *" load3b "* ]]; then
  echo "== 3B: 4 steps and the final save (45 GB), then the checkpoint read back by"
  echo "   \`checkpoint inspect --verify\` (a resume's read and checksum path) from a dropped page"
  echo "   cache, against dd's O_DIRECT read of the same shard file; a resume itself would save 45 GB"
  echo "   more, which this 64 GB disk cannot hold beside the first"
  cfg3="$work/llama3.2_3b.json"
  python3 - tests/fixtures/configs/llama3.2_1b_instruct.json "$cfg3" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c.update(hidden_size=3072, intermediate_size=8192, num_hidden_layers=28, num_attention_heads=24,
         num_key_value_heads=8, head_dim=128)
json.dump(c, open(sys.argv[2], "w"))
PY
  timeout 300 "$bin/zerotrain" train --init random --data .carry/kjv.bin --device cuda --dtype bf16 \
    --model "$cfg3" --seq-len 4096 --micro-batch 1 --steps 4 --log-every 2 --keep-checkpoints 1 \
    --out "$work/c3" > "$OUT/load3b_train.log" 2>&1
  echo "rc $?" >> "$OUT/load3b_train.log"
  grep -E "checkpoint saves|rc " "$OUT/load3b_train.log" | cut -c1-300
  shard_3b=$(ls "$work"/c3/checkpoints/step-*/rank-00000-of-*.safetensors | tail -1)
  bytes_3b=$(stat -c %s "$shard_3b")
  for round in 1 2; do
    dd_read "$shard_3b" "load3b_dd_read_$round"
    drop_caches
    t0=$(date +%s.%N)
    /usr/bin/time -f "verify wall %e s, peak RSS %M KB" "$bin/zerotrain" checkpoint inspect --verify \
      "$work/c3" > "$OUT/load3b_verify_$round.log" 2>&1
    rc=$?
    t1=$(date +%s.%N)
    echo "rc $rc" >> "$OUT/load3b_verify_$round.log"
    tail -3 "$OUT/load3b_verify_$round.log"
    verify_gbps=$(awk -v b="$bytes_3b" -v a="$t0" -v z="$t1" 'BEGIN { printf "%.3f", b / (z - a) / 1e9 }')
    echo "round $round: verify $bytes_3b bytes at $verify_gbps GB/s; dd $dd_gbps GB/s;" \
      "ratio $(ratio "$verify_gbps" "$dd_gbps") (target >= 0.80)" | tee -a "$OUT/load3b.txt"
    printf '{"round": %d, "bytes": %s, "dd_read_GBps": %s, "verify_GBps": %s, "ratio": %s, "rc": %d}\n' \
      "$round" "$bytes_3b" "$dd_gbps" "$verify_gbps" "$(ratio "$verify_gbps" "$dd_gbps")" "$rc" \
      >> "$OUT/load3b.jsonl"
  done
  python3 -c 'import json, sys; print(json.dumps([json.loads(l) for l in open(sys.argv[1])], indent=1))' \
    "$OUT/load3b.jsonl" > "$OUT/load3b.json"
  rm -rf "$work/c3"
fi

if [[ "$parts" == *" firststeps "* ]]; then
  echo "== the first 20 1B steps: train_bench (no checkpoint) beside zerotrain train, whose save"
  echo "   buffers are made in the background from the start"
  timeout 200 "$bin/train_bench" --model 1b --seq 4096 --mbs 2 --warmup 0 --steps 20 \
    --json "$OUT/firststeps_bench.json" > "$OUT/firststeps_bench.log" 2>&1
  grep -E "tok/s|tokens/s" "$OUT/firststeps_bench.log" | head -4
  timeout 200 "$bin/zerotrain" train --init random --data .carry/kjv.bin --device cuda --dtype bf16 \
    --model tests/fixtures/configs/llama3.2_1b_instruct.json --seq-len 4096 --micro-batch 2 --steps 20 \
    --log-every 1 --keep-checkpoints 1 --out "$work/first" > "$OUT/firststeps_train.log" 2>&1
  echo "rc $?" >> "$OUT/firststeps_train.log"
  grep -E "^step|start-up|checkpoint saves|rc " "$OUT/firststeps_train.log" | cut -c1-160
  rm -rf "$work/first"
fi

if [[ "$parts" == *" hf "* ]]; then
  echo "== consolidated checkpoints in transformers, zerotrain's logits on the GPU"
  python3 tools/parity/check_consolidate.py --zerotrain "$bin/zerotrain" --runner "$bin/parity_runner" \
    --device cuda > "$OUT/check_consolidate.log" 2>&1
  echo "rc $?" >> "$OUT/check_consolidate.log"
  tail -6 "$OUT/check_consolidate.log"
fi
