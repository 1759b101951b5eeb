#!/usr/bin/env bash
# Configures and builds zerotrain into build/ (or $1). Extra arguments go to CMake, e.g.
#   scripts/build.sh build-asan -DZT_CUDA=OFF -DZT_SANITIZE=address,undefined
set -euo pipefail
cd "$(dirname "$0")/.."
dir="${1:-build}"
shift || true
cmake -S . -B "$dir" -G Ninja "$@"
cmake --build "$dir" --parallel "$(nproc)"
