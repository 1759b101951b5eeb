#!/usr/bin/env bash
# Installs what zerotrain needs to build and test on Debian 12 (run as root, or with sudo present).
# The CUDA toolkit is optional and not installed here: with /usr/local/cuda/bin/nvcc present the CUDA
# backend is built too, otherwise a CPU-only build is made.
set -euo pipefail
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
PKGS=(build-essential cmake ninja-build pkg-config git python3
      libopenblas-dev libomp-dev libgtest-dev libgmock-dev libbenchmark-dev
      nlohmann-json3-dev libcli11-dev openmpi-bin libopenmpi-dev zlib1g-dev liburing-dev
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
