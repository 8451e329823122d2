#!/usr/bin/env bash
# bench/cpu: the CPU target against the same loops in C++ (g++ -O3), side by
# side, on the same threads. usage: bench/cpu/run.sh [TESSERAC] [N] [REPEAT]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
tesserac="${1:-$here/../../build/release/tools/tesserac}"
n="${2:-16777216}"
repeat="${3:-20}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
g++ -O3 -march=native -std=c++17 -pthread "$here/native.cpp" -o "$work/native"
native_line="$("$work/native" "$work" "$n" "$repeat")"
echo "$native_line"
native_saxpy="$(sed -E 's/.*saxpy min ([0-9.]+) ms.*/\1/' <<<"$native_line")"
native_total="$(sed -E 's/.*total min ([0-9.]+) ms.*/\1/' <<<"$native_line")"
groups=$(( (n + 255) / 256 ))
saxpy_line="$("$tesserac" run "$here/elementwise.tsr" --device cpu --grid "$groups" --no-bounds-check -q \
  --arg x="$work/x.npy" --arg y="$work/y.npy" --arg alpha=2 --time "$repeat")"
echo "tesserac: $saxpy_line"
# The reduction: a few groups per worker thread, each lane a grid-stride loop.
total_line="$("$tesserac" run "$here/reduction.tsr" --device cpu --grid 64 --no-bounds-check -q \
  --arg x="$work/x.npy" --arg out="$work/out.npy" --time "$repeat")"
echo "tesserac: $total_line"
# The same reduction with each lane summing one contiguous slice: native.cpp's loop.
contiguous_line="$("$tesserac" run "$here/reduction_contiguous.tsr" --device cpu --grid 64 --no-bounds-check -q \
  --arg x="$work/x.npy" --arg out="$work/out.npy" --time "$repeat")"
echo "tesserac: $contiguous_line (contiguous slices)"
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
t_saxpy="$(sed -E 's/.*min ([0-9.]+) ms.*/\1/' <<<"$saxpy_line")"
t_total="$(sed -E 's/.*min ([0-9.]+) ms.*/\1/' <<<"$total_line")"
t_contiguous="$(sed -E 's/.*min ([0-9.]+) ms.*/\1/' <<<"$contiguous_line")"
echo "speed relative to native (target >= 0.50): elementwise $(ratio "$native_saxpy" "$t_saxpy"), reduction $(ratio "$native_total" "$t_contiguous") (contiguous slices; grid-stride: $(ratio "$native_total" "$t_total"))"
