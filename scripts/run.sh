#!/usr/bin/env bash
# The main job on its default: install, build, then run the runtime self-check (every kernel's
# backward against finite differences on the CPU, and CUDA against CPU when a GPU is present).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install_deps.sh
scripts/build.sh build
build/bin/zerotrain selfcheck "$@"
