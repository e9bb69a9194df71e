#!/usr/bin/env bash
# setup-debian.sh - installs what FLAMIA-H builds and runs with on Debian 12
# (run as root; idempotent). The CUDA toolkit is optional: with nvcc on PATH (or
# in /usr/local/cuda/bin) the Hopper kernels are compiled too.
set -euo pipefail
packages=(gcc pkg-config meson ninja-build libhdf5-dev gnuplot-nox snakemake python3 git)
missing=()
for p in "${packages[@]}"; do dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p"); done
if ((${#missing[@]})); then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
