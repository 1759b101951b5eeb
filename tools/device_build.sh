#!/usr/bin/env bash
# Runs here (no GPU needed): builds the CUDA backend into build-dev/ and stages what the GPU machine
# needs in .carry/dev (git-ignored): the binaries, libzerotrain and the host libraries its image
# lacks (OpenBLAS and its Fortran runtime, OpenMP). Then: device run with carry [".carry/dev"] and
# command `ZT_COMMIT=<sha> tools/device_run.sh`.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh build-dev -DZT_CUDA=ON -DZT_SANITIZE= >/dev/null
rm -rf .carry/dev && mkdir -p .carry/dev/bin .carry/dev/lib
cp build-dev/bin/zerotrain build-dev/bin/zerotrain_tests build-dev/bin/kernel_bench \
  build-dev/bin/train_bench build-dev/bin/parity_runner .carry/dev/bin/
# The PyTorch FSDP2 peer, run beside our benchmarks in the same call.
cp ../shared/bench/fsdp2_peer.py .carry/dev/
cp build-dev/lib/libzerotrain.so .carry/dev/lib/
for lib in libopenblas.so.0 libgfortran.so.5 libquadmath.so.0 libgomp.so.1; do
  cp -L "$(ldconfig -p | awk -v l="$lib" '$1 == l && /x86-64/ {print $NF; exit}')" .carry/dev/lib/
done
strip --strip-unneeded .carry/dev/lib/*.so* .carry/dev/bin/*
du -sh .carry/dev
