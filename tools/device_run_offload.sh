#!/usr/bin/env bash
# Runs on the GPU machine (device tool), one call: the measurements of issue 15 (offload to CPU and
# NVMe) over the binaries staged by tools/device_build.sh (.carry/dev), each part time-boxed so a
# hang cannot eat the call, in order of importance until the budget (ZT_BUDGET_S, default 540 s)
# runs out (parts left over are listed as skipped: run them in a second call by name):
#   tests  the CUDA tests of zero/ and optim/ (and every offload test) from zerotrain_tests
#   gpt2   the seed's case: GPT-2 XL, seq 1024, `zerotrain train --gpu-memory-cap 24GiB`: stage 0
#          at micro-batch 1 (must stop with the out-of-memory line), then the write-up's own
#          bench/configs/zero3_offload_config_accelerate.json at micro-batch 16 ("auto" filled by
#          flags), fp16 as written and bf16 (fp16 section swapped for bf16), with activation
#          checkpointing (micro-batch 16's activations alone pass 24 GiB without it): tokens/s, GPU
#          peak, host peak (tools/peak_rss.py)
#   sweep  overlap: train_bench --model 3b --seq 4096 bf16, ZeRO-2 and ZeRO-3, accumulation 8 and
#          1 (one process each), optimizer offload cpu (with --measure-parts) and none
#   sweep_ac  the same at accumulation 8 with activation checkpointing (none fits an 80 GiB H100)
#   peer   ../shared/bench/fsdp2_peer.py --mode fsdp2-offload --model 3b (carried in .carry/dev)
#   size   the largest Llama shape that trains under a 24 GiB cap without offload, and with
#          parameters and optimizer on the CPU (bench_models.h's ladder; stop at the first failure)
#   nvme   bench/nvme_bench when built (raw O_DIRECT rate against the swap layer's), and a
#          0.7b run with the optimizer state and the parameters in swap files
#   parity zerotrain train on the 4M KJV model, ZeRO-3 bf16, without offload, with optimizer and
#          parameters on the CPU, both on NVMe, parameters alone on NVMe: the losses and the model
#          and optimizer files must be bitwise those of the run without offload
# Writes $OUT/offload_summary.json (tools/offload_results.py collect) and $OUT/offload_logs.tar.xz
# (every log and JSON); tools/offload_results.py publish turns the summary into
# bench/results/offload_<gpu>.json here.
# Usage (device tool, carry [".carry/dev"] and optionally ".carry/kjv.bin"):
#   ZT_COMMIT=<sha> tools/device_run_offload.sh [tests gpt2 sweep sweep_ac peer size nvme parity]
set -uo pipefail
# shellcheck source=tools/device_env.sh
source tools/device_env.sh
[ -f .carry/dev/lib/libzerotrain.so.xz ] && [ ! -f .carry/dev/lib/libzerotrain.so ] && xz -dk .carry/dev/lib/libzerotrain.so.xz
parts=" ${*:-tests gpt2 sweep peer size nvme} "
end=$((SECONDS + ${ZT_BUDGET_S:-540}))
work=/tmp/zt_offload
rm -rf "$work" && mkdir -p "$work/json" "$work/logs" "$work/runs"
# The CPU Adam and the peer use every host core (torchrun would give the peer one thread).
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-$(nproc)}"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$work/logs/gpu.txt"
printf '{"cores": %d, "mem_total_kib": %d, "disk_free_bytes": %d, "omp_threads": %d}\n' "$(nproc)" \
  "$(awk '/MemTotal/ {print $2}' /proc/meminfo)" "$(df -B1 --output=avail /tmp | tail -1)" \
  "$OMP_NUM_THREADS" > "$work/json/machine.json"
cat "$work/json/machine.json"

want() { [[ "$parts" == *" $1 "* ]]; }
# box NAME LIMIT_S COMMAND...: runs COMMAND under `timeout`, at most LIMIT_S and never past the
# budget, output in logs/NAME.log, one line in parts.jsonl; first in line for the OOM killer.
box() {
  local name=$1 limit=$2 left=$((end - SECONDS)) t0=$SECONDS rc
  shift 2
  if ((left < limit / 2 || left < 15)); then
    printf '{"name": "%s", "skipped": "%ds of the budget left, %ds wanted"}\n' "$name" "$left" "$limit" >> "$work/parts.jsonl"
    echo "  $name: skipped ($left s left)"
    return 125
  fi
  ((limit > left)) && limit=$left
  (echo 1000 > /proc/self/oom_score_adj; exec timeout -k 5 "$limit" "$@") > "$work/logs/$name.log" 2>&1
  rc=$?
  printf '{"name": "%s", "rc": %d, "wall_s": %d, "limit_s": %d}\n' "$name" "$rc" $((SECONDS - t0)) "$limit" >> "$work/parts.jsonl"
  echo "  $name: rc=$rc, $((SECONDS - t0)) s"
  tail -2 "$work/logs/$name.log" | cut -c1-300
  return "$rc"
}
tb() {  # tb NAME ARGS...: one train_bench run, its JSON in json/NAME.json
  local name=$1
  shift
  box "$name" "${TB_LIMIT:-90}" "$bin/train_bench" --commit "$commit" --json "$work/json/$name.json" "$@"
}

if want tests; then
  echo "== tests: CUDA tests of zero/ and optim/, every offload test"
  box tests 120 "$bin/zerotrain_tests" --gtest_output="json:$work/json/gtest.json" \
    --gtest_filter='Zero*:GradBuckets*:*Offload*:*Swap*:*Nvme*:*Pinned*:*HostBuffer*:OptimCuda*:*FlatOptimizer*:*LowPrecisionCuda*:*Allocator*'
fi

if want gpt2; then
  echo "== GPT-2 XL, seq 1024, one GPU capped at 24 GiB (zerotrain train)"
  tokens=.carry/kjv.bin
  if [ ! -f "$tokens" ]; then
    tokens="$work/tokens.bin"  # no corpus carried: the checkout's own text, tokenized
    mapfile -t texts < <(find src docs -name '*.cpp' -o -name '*.h' -o -name '*.md' | sort)
    box tokens 60 "$bin/zerotrain" data prepare --tokenizer assets/tokenizers/kjv-bpe-4096/tokenizer.json \
      --input "${texts[@]}" --append-eos --output "$tokens" --quiet
  fi
  model=assets/models/gpt2-xl/config.json  # the seeded init on the host when no weights can be made
  box gpt2_weights 90 python3 tools/make_random_gpt2.py assets/models/gpt2-xl/config.json "$work/gpt2-xl" &&
    model="$work/gpt2-xl"
  train=(python3 tools/peak_rss.py)
  common=(--model "$model" --data "$tokens" --device cuda --gpu-memory-cap 24GiB --seq-len 1024 --lr 1e-5)
  box gpt2_stage0_mbs1 90 "${train[@]}" --json "$work/json/gpt2_stage0_mbs1.peak.json" -- \
    "$bin/zerotrain" train "${common[@]}" --out "$work/runs/gpt2_stage0_mbs1" --zero-stage 0 --dtype f16 \
    --micro-batch 1 --steps 2
  python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
d.pop('fp16')
d['bf16'] = {'enabled': True}
json.dump(d, open(sys.argv[2], 'w'), indent=1)" bench/configs/zero3_offload_config_accelerate.json "$work/zero3_offload_config_accelerate_bf16.json"
  for prec in fp16 bf16; do
    cfg=bench/configs/zero3_offload_config_accelerate.json
    [ $prec = bf16 ] && cfg="$work/zero3_offload_config_accelerate_bf16.json"
    # steps_per_print (2000) logs the last step only: metrics.jsonl appears when training is done,
    # and the run is stopped there rather than spending the budget on writing its checkpoint.
    box "gpt2_offload_$prec" 150 "${train[@]}" --json "$work/json/gpt2_offload_$prec.peak.json" \
      --stop-after "$work/runs/gpt2_offload_$prec/metrics.jsonl" -- \
      "$bin/zerotrain" train "${common[@]}" --out "$work/runs/gpt2_offload_$prec" --deepspeed "$cfg" \
      --micro-batch 16 --steps 8 --warmup 1 --weight-decay 0.0 --clip 1.0 --activation-checkpointing
    rm -rf "$work/runs/gpt2_offload_$prec/model" "$work/runs/gpt2_offload_$prec/checkpoints"
  done
  rm -rf "$work/gpt2-xl"
fi

if want sweep; then
  echo "== overlap: Llama-3.2-3B shape, seq 4096, bf16, one GPU"
  # One process per stage and placement times accumulation 8, then 1 (the engine is built once).
  for off in cpu none; do
    for z in 2 3; do
      extra=()
      [ "$off" = cpu ] && extra=(--measure-parts)
      TB_LIMIT=120 tb "sweep_z${z}_$off" --model 3b --seq 4096 --mbs 1 --init tiled --zero-stage "$z" \
        --grad-accum 8 1 --offload-optimizer "$off" --warmup 1 --steps 3 "${extra[@]}"
    done
  done
fi

if want sweep_ac; then
  echo "== overlap with activation checkpointing: 3B, seq 4096, bf16, accumulation 8 (fits without offload)"
  for off in cpu none; do
    for z in 2 3; do
      extra=()
      [ "$off" = cpu ] && extra=(--measure-parts)
      TB_LIMIT=100 tb "sweep_ac_z${z}_$off" --model 3b --seq 4096 --mbs 1 --ac --init tiled \
        --zero-stage "$z" --grad-accum 8 --offload-optimizer "$off" --warmup 1 --steps 2 "${extra[@]}"
    done
  done
fi

if want peer; then
  echo "== the FSDP2 peer with CPU offload, 3B shape, seq 4096, mbs 1"
  peer=.carry/dev/fsdp2_peer.py
  [ -f "$peer" ] || peer=shared/bench/fsdp2_peer.py
  box peer_fsdp2_offload 150 python3 -m torch.distributed.run --standalone --nproc_per_node=1 "$peer" \
    --model 3b --mode fsdp2-offload --mbs 1 --seq 4096 --warmup 1 --steps 3
fi

if want size; then
  echo "== size: the largest Llama shape under a 24 GiB cap, seq 1024, mbs 1, activation checkpointing"
  size=(--seq 1024 --mbs 1 --ac --init tiled --gpu-memory-cap 24GiB --warmup 1 --steps 1)
  for m in 0.7b 1.1b 1b 3b; do
    tb "size_none_$m" --model "$m" --zero-stage 0 "${size[@]}" || break
  done
  # Host bytes with parameters and optimizer on the CPU: about 16 per parameter (16-bit values,
  # f32 masters and moments, gradients); a shape the host cannot hold is skipped, not tried.
  declare -A params_b=([3b]=3.61 [5b]=5.41 [6b]=6.29 [7b]=7.16 [8b]=8.03)
  fits_host() {
    awk -v p="${params_b[$1]}" -v kib="$(awk '/MemAvailable/ {print $2}' /proc/meminfo)" \
      'BEGIN { exit !(p * 1e9 * 16 < kib * 1024 * 0.95) }'
  }
  off=(--zero-stage 3 --offload-optimizer cpu --offload-param cpu)
  passed=0
  for m in 6b 7b 8b; do
    if ! fits_host "$m"; then
      printf '{"name": "size_cpu_%s", "skipped": "host memory: ~%s GB needed"}\n' "$m" \
        "$(awk -v p="${params_b[$m]}" 'BEGIN {print p * 16}')" >> "$work/parts.jsonl"
      echo "  size_cpu_$m: skipped, host memory"
      break
    fi
    TB_LIMIT=120 tb "size_cpu_$m" --model "$m" "${off[@]}" "${size[@]}" || break
    passed=1
  done
  if [ $passed = 0 ]; then  # the first rung failed: walk down until one trains
    for m in 5b 3b; do
      fits_host "$m" || continue
      TB_LIMIT=120 tb "size_cpu_$m" --model "$m" "${off[@]}" "${size[@]}" && break
    done
  fi
fi

if want nvme; then
  echo "== NVMe: swap files against the disk's raw O_DIRECT rate"
  mkdir -p "$work/nvme"
  if [ -x "$bin/nvme_bench" ]; then
    box nvme_bench 90 "$bin/nvme_bench" --path "$work/nvme" --gib 4 --reps 2 --commit "$commit" \
      --json "$work/json/nvme_bench.json"
  else
    echo "  nvme_bench: not in .carry/dev/bin (not built); skipped"
    printf '{"name": "nvme_bench", "skipped": "not built"}\n' >> "$work/parts.jsonl"
  fi
  TB_LIMIT=150 tb size_nvme_0.7b --model 0.7b --seq 1024 --mbs 1 --ac --init tiled --gpu-memory-cap 24GiB \
    --warmup 1 --steps 1 --zero-stage 3 --offload-optimizer nvme --offload-param nvme --nvme-path "$work/nvme"
  rm -rf "$work/nvme"
fi

if want parity; then
  echo "== parity on the GPU: the 4M KJV model, ZeRO-3 bf16, offload none / cpu / nvme, bitwise"
  tokens=.carry/kjv.bin
  mkdir -p "$work/nvme"
  run=(--model assets/models/kjv-llama-4m/config.json --data "$tokens" --device cuda --steps 10 --micro-batch 4
    --seq-len 128 --lr 3e-3 --warmup 2 --log-every 1 --zero-stage 3 --dtype bf16 --clip 1.0)
  declare -A placements=([none]="" [cpu]="--offload-optimizer cpu --offload-param cpu"
    [nvme]="--offload-optimizer nvme --offload-param nvme --nvme-path $work/nvme"
    [param_nvme]="--offload-param nvme --nvme-path $work/nvme")
  for p in none cpu nvme param_nvme; do
    # shellcheck disable=SC2086
    box "parity_$p" 60 "$bin/zerotrain" train "${run[@]}" --out "$work/runs/parity_$p" ${placements[$p]}
  done
  python3 tools/offload_results.py parity "$work/runs" --out "$work/json/parity.json"
  rm -rf "$work/nvme"
fi

echo "== summary"
python3 tools/offload_results.py collect "$work" --commit "$commit" --out "$OUT/offload_summary.json"
cp "$work/logs/gpu.txt" "$OUT/gpu.txt"
(cd "$work" && tar --exclude='*.safetensors' --exclude='*.bin' -cJf "$OUT/offload_logs.tar.xz" logs json parts.jsonl runs)
ls -la "$OUT"
