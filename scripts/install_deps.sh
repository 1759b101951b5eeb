#!/usr/bin/env bash
# Installs what zerotrain needs to build and test on Debian 12 (run as root, or with sudo present).
# The CUDA toolkit is optional and not installed here: with /usr/local/cuda/bin/nvcc present the CUDA
# backend is built too, otherwise a CPU-only build is made.
set -euo pipefail
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
PKGS=(build-essential cmake ninja-build pkg-config git python3
      libopenblas-dev libomp-dev libgtest-dev libgmock-dev libbenchmark-dev
      nlohmann-json3-dev libcli11-dev libyaml-cpp-dev openmpi-bin libopenmpi-dev zlib1g-dev liburing-dev
      python3-torch python3-venv python3-pip)
# tests/hosts/two_hosts.py: network namespaces and a veth pair (`ip netns`, `ip link`).
PKGS+=(iproute2)
# The fuzz step of scripts/test.sh (fuzz/, tools/fuzz_all.sh): clang with libFuzzer's runtime.
PKGS+=(clang libclang-rt-dev)
# The chat fine-tune check of scripts/parity_cpu.sh builds its data from the referenced verses.
PKGS+=(bible-kjv)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "[setup] installing: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -q
  $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
else
  echo "[setup] all packages present"
fi

# NVIDIA's cudnn-frontend (its header-only C++ API; kernels/cuda/cudnn_attention.cpp draws cuDNN's
# attention graphs with it), for the CUDA backend only, so only where nvcc is. Its PyPI wheel ships
# the headers under include/; they are unpacked, as they are, into third_party/cudnn_frontend/include
# (git-ignored), from the wheel whose hash scripts/cudnn_frontend.txt pins. Nothing else of the wheel
# (its Python module) is used.
CUDNN_FRONTEND_VERSION=1.32.0
if [ -x /usr/local/cuda/bin/nvcc ] || command -v nvcc >/dev/null; then
  (
    cd "$(dirname "$0")/.."
    dest=third_party/cudnn_frontend
    if [ "$(cat "$dest/VERSION" 2>/dev/null)" = "$CUDNN_FRONTEND_VERSION" ]; then
      echo "[setup] cudnn-frontend $CUDNN_FRONTEND_VERSION present"
      exit 0
    fi
    echo "[setup] fetching cudnn-frontend $CUDNN_FRONTEND_VERSION headers"
    wheel_dir="$(mktemp -d)"
    trap 'rm -rf "$wheel_dir"' EXIT
    # One wheel whatever the host (the headers are the same in every wheel), checked by its hash.
    python3 -m pip download -q --no-deps --only-binary=:all: --implementation cp --python-version 3.11 \
      --platform manylinux_2_28_x86_64 --require-hashes -r scripts/cudnn_frontend.txt -d "$wheel_dir"
    rm -rf "$dest" && mkdir -p "$dest"
    python3 - "$wheel_dir"/*.whl "$dest" <<'PY'
import sys, zipfile
wheel, dest = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(wheel) as z:
    z.extractall(dest, [n for n in z.namelist() if n.startswith("include/")])
PY
    echo "$CUDNN_FRONTEND_VERSION" > "$dest/VERSION"
  )
fi
