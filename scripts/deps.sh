#!/usr/bin/env bash
# deps.sh: installs ctpu's build and test dependencies on Debian 12 (apt). Idempotent.
set -euo pipefail
pkgs=(build-essential cmake pkg-config libopenblas-dev libhdf5-dev hdf5-tools check
      libprotobuf-c-dev protobuf-c-compiler libonnx-dev libcjson-dev libjpeg-dev libpng-dev)
missing=()
for p in "${pkgs[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi
