#!/usr/bin/env bash
# Runs on the 4-GPU machine (device tool, kind nvidia-h200-x4) over binaries staged by
# tools/device_build.sh: every test (CUDA ones included), the multi-rank tests (NCCL and MPI) on 2
# and 4 ranks, collective bus bandwidth against raw NCCL on 2 and 4 GPUs, data-parallel training of
# the Llama-1B shape on 4 GPUs beside the FSDP2 peer's DDP mode, and the optimizer benchmark on the
# 64-core host beside torch's AdamW. Logs go to $OUT, every JSON into $OUT/raw.tgz (the device
# tool brings back at most 8 files).  Usage: ZT_COMMIT=<sha> tools/device_run_dist.sh [tests|train|all]
# (two parts, so that each fits one 10-minute device call).
set -uo pipefail
source tools/device_env.sh
raw="$OUT/raw"
mkdir -p "$raw"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$raw/gpu.txt"
nproc | tee "$raw/host_cores.txt"
command -v mpirun || echo "no mpirun on this machine"
ldd "$bin/zerotrain" | grep "not found" && echo "missing libraries above"

part="${1:-all}"
if [ "$part" = tests ] || [ "$part" = all ]; then
echo "== unit tests"
"$bin/zerotrain_tests" --gtest_output="json:$raw/gtest.json" > "$OUT/tests.log" 2>&1
echo "tests rc=$?"
grep -E "^\[  (FAILED|PASSED) |tests ran" "$OUT/tests.log" | head -30

echo "== multi-rank tests (NCCL and MPI)"
for n in 2 4; do
  timeout 300 mpirun -n "$n" --bind-to none -x OMP_NUM_THREADS=4 "$bin/comm_mpi_tests" \
    > "$raw/mpi_np$n.log" 2>&1
  echo "np$n rc=$?"
  grep -aE "\[  (FAILED|PASSED) \]|Skipped|SKIPPED" "$raw/mpi_np$n.log" | sort | uniq -c | head -20
done

echo "== collective bus bandwidth, ours vs raw NCCL"
for n in 2 4; do
  timeout 300 mpirun -n "$n" --bind-to none "$bin/comm_bench" --json "$raw/comm_np$n.json" \
    > "$raw/comm_np$n.log" 2>&1
  echo "np$n rc=$?"
  tail -25 "$raw/comm_np$n.log"
done

echo "== zerotrain launch (TCP rendezvous for NCCL) on 2 GPUs, tiny model"
timeout 120 "$bin/zerotrain" launch -n 2 -- "$bin/train_bench" --model tiny --seq 512 --mbs 2 \
  --steps 3 --warmup 1 2>&1 | tail -4

fi
if [ "$part" = train ] || [ "$part" = all ]; then
echo "== multi-rank tests on 4 GPUs (again, after the fixes of the first call)"
timeout 300 mpirun -n 4 --bind-to none -x OMP_NUM_THREADS=4 "$bin/comm_mpi_tests" > "$raw/mpi_np4_b.log" 2>&1
echo "np4 rc=$?"
grep -aE "\[  (FAILED|PASSED) \]" "$raw/mpi_np4_b.log" | sort | uniq -c
for i in 1 2 3; do
  timeout 120 "$bin/zerotrain" launch -n 4 -- "$bin/comm_mpi_tests" --gtest_filter='NcclCommunicatorTest.*' \
    > "$raw/launch_nccl_$i.log" 2>&1
  echo "launch + TCP rendezvous, NCCL tests, try $i: rc=$?"
done
grep -aE "PASSED|FAILED" "$raw/launch_nccl_1.log" | head -8
echo "== Llama-1B, seq 4096, mbs 2, DDP on 4 GPUs, beside the FSDP2 peer's DDP"
timeout 300 "$bin/zerotrain" launch -n 4 -- "$bin/train_bench" --model 1b --seq 4096 --mbs 2 \
  --commit "$commit" --json "$raw/ddp_1b.json" 2>&1 | tail -4
timeout 400 python3 -m torch.distributed.run --standalone --nproc_per_node=4 .carry/dev/fsdp2_peer.py \
  --model 1b --mode ddp --mbs 2 2>&1 | grep RESULT | tee "$raw/peer_ddp_1b.txt"

echo "== optimizers: AdamW on 1e9 parameters, host CPU and GPU"
if [ -f .carry/dev/torch_adamw_peer.py ]; then
  timeout 300 python3 .carry/dev/torch_adamw_peer.py --n 1e9 --reps 5 > "$raw/torch_adamw.json" 2> "$raw/torch_adamw.err"
  cat "$raw/torch_adamw.json"
fi
OMP_PROC_BIND=spread OMP_PLACES=cores timeout 300 "$bin/optim_bench" --n 1e9 --reps 5 \
  --peer "$raw/torch_adamw.json" --commit "$commit" --json "$raw/optim.json" 2>&1 | tail -20

fi
tar czf "$OUT/raw-$part.tgz" -C "$OUT" raw && rm -rf "$raw"
echo "== done"
