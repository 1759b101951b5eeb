#!/usr/bin/env bash
# Runs here (no GPU needed): builds the CUDA backend into build-dev/ and stages what the GPU machine
# needs in .carry/dev (git-ignored): the binaries, libzerotrain, the host libraries its image may
# lack (OpenBLAS, xz-compressed to fit the 64 MiB carry, its Fortran runtime, OpenMP) and the
# PyTorch peers. Then: device run with carry [".carry/dev"] and command
# `ZT_COMMIT=<sha> tools/device_run.sh` (kernels), `tools/device_run_models.sh` (models) or
# `tools/device_run_dist.sh` (several GPUs: collectives, DDP, optimizers).
# ZT_BUILD_DIR names the build folder (default build-dev; a CUDA build/ already built serves too).
set -euo pipefail
cd "$(dirname "$0")/.."
dir="${ZT_BUILD_DIR:-build-dev}"
scripts/build.sh "$dir" -DZT_CUDA=ON -DZT_SANITIZE= >/dev/null
rm -rf .carry/dev && mkdir -p .carry/dev/bin .carry/dev/lib
for b in zerotrain zerotrain_tests comm_mpi_tests kernel_bench train_bench comm_bench optim_bench optim_lowp_bench \
  parity_runner nvme_bench pinning_bench; do
  [ -x "$dir/bin/$b" ] && cp "$dir/bin/$b" .carry/dev/bin/
done
# The PyTorch peers, run beside our benchmarks in the same call.
cp ../shared/bench/fsdp2_peer.py .carry/dev/
[ -f bench/torch_adamw_peer.py ] && cp bench/torch_adamw_peer.py .carry/dev/
cp $dir/lib/libzerotrain.so .carry/dev/lib/
# The CUPTI timeline recorder and its analysis (bench/gpu_timeline/): where the GPU sits idle.
cp $dir/lib/libzt_gpu_timeline.so .carry/dev/lib/
cp bench/gpu_timeline/gaps.py .carry/dev/
for lib in libopenblas.so.0 libgfortran.so.5 libquadmath.so.0 libgomp.so.1 libyaml-cpp.so.0.7; do
  cp -L "$(ldconfig -p | awk -v l="$lib" '$1 == l && /x86-64/ {print $NF; exit}')" .carry/dev/lib/
done
strip --strip-unneeded .carry/dev/lib/*.so* .carry/dev/bin/*
# The device scripts unpack it when the image has no OpenBLAS of its own.
xz -T2 -6 .carry/dev/lib/libopenblas.so.0
du -sh .carry/dev
