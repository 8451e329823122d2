#!/usr/bin/env bash
# Installs what tesserac needs on a fresh Debian 12 machine (run as root or with sudo).
# Idempotent: when every package is already present it only checks and returns.
set -euo pipefail

packages=(
  build-essential cmake ninja-build ccache pkg-config git python3
  llvm-22-dev llvm-22-tools libclang-rt-22-dev clang-22
  re2c bison
  libcli11-dev libfmt-dev doctest-dev nlohmann-json3-dev
  libopenmpi-dev openmpi-bin
  clang-format
  python3-numpy libopenblas0-pthread
)

missing=()
for pkg in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$pkg")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
