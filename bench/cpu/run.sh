#!/usr/bin/env bash
# bench/cpu: the CPU target against the same computations as C++ loops
# (g++ -O3 -march=native, native.cpp), side by side, on the same threads.
#
# usage: bench/cpu/run.sh [TESSERAC] [N] [REPEAT] [ROUNDS]
#
# Kernels: elementwise (saxpy over N), a reduction over N in two forms (each
# lane a contiguous slice, native.cpp's loop; each lane a grid-stride slice,
# the GPU form) against the same sum, a tiled transpose (2048 x 2048, 32 x 32
# tiles through shared memory, a barrier) against a blocked loop, and a tiled
# matmul (1024^3, 16 x 16 tiles, two barriers per step of K) against a
# blocked loop. Each of ROUNDS rounds (default 5) runs native.cpp (the best
# of REPEAT runs of each loop, default 10) and then each kernel with
# `tesserac run --time REPEAT` (the best of REPEAT launches), so each round
# gives one ratio native / tesserac per kernel, measured minutes apart at
# most. Prints each kernel's median times and the median ratio with the
# lowest and highest of the rounds (the machine is shared: the spread is the
# noise), then the date, the machine and the load. Threads: the CPU device's
# (TESSERA_CPU_THREADS, default one per hardware thread) for both.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
tesserac="${1:-$here/../../build/release/tools/tesserac}"
n="${2:-16777216}"
repeat="${3:-10}"
rounds="${4:-5}"
transpose_size=2048
matmul_size=1024
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
g++ -O3 -march=native -std=c++17 -pthread "$here/native.cpp" -o "$work/native"

kernels="elementwise contiguous grid_stride transpose matmul"
declare -A label=([elementwise]="elementwise (saxpy)" [contiguous]="reduction, contiguous slices"
                  [grid_stride]="reduction, grid-stride" [transpose]="tiled transpose, shared + barrier"
                  [matmul]="tiled matmul, shared + barriers")
declare -A target=([elementwise]=1.0 [contiguous]=1.0 [grid_stride]=0.5 [transpose]=0.5 [matmul]=0.5)
declare -A native_ms tesserac_ms ratios

# tesserac_min ARGS...: the best launch time of `tesserac run ARGS --time REPEAT`.
tesserac_min() {
  "$tesserac" run "$@" --device cpu --no-bounds-check -q --time "$repeat" | sed -E 's/.*min ([0-9.]+) ms.*/\1/'
}
field() { sed -E "s/.*$1 min ([0-9.]+) ms.*/\\1/" <<<"$2"; }

for ((r = 0; r < rounds; r++)); do
  line="$("$work/native" "$work" "$n" "$repeat" "$transpose_size" "$matmul_size")"
  [[ $r == 0 ]] && echo "$line"
  nat_saxpy=$(field saxpy "$line") nat_total=$(field total "$line")
  nat_transpose=$(field transpose "$line") nat_matmul=$(field matmul "$line")
  t_elementwise=$(tesserac_min "$here/elementwise.tsr" --grid $(( (n + 255) / 256 )) --arg x="$work/x.npy" --arg y="$work/y.npy" --arg alpha=2)
  t_contiguous=$(tesserac_min "$here/reduction_contiguous.tsr" --grid 64 --arg x="$work/x.npy" --arg out="$work/out.npy")
  t_grid_stride=$(tesserac_min "$here/reduction.tsr" --grid 64 --arg x="$work/x.npy" --arg out="$work/out.npy")
  t_transpose=$(tesserac_min "$here/transpose.tsr" --grid $((transpose_size / 32)),$((transpose_size / 32)) \
    --arg src="$work/a.npy" --arg dst="$work/at.npy")
  t_matmul=$(tesserac_min "$here/matmul.tsr" --grid $((matmul_size / 16)),$((matmul_size / 16)) \
    --arg A="$work/A.npy" --arg B="$work/B.npy" --arg C="$work/C.npy")
  for k in $kernels; do
    case $k in
      elementwise) nat=$nat_saxpy ;; contiguous | grid_stride) nat=$nat_total ;;
      transpose) nat=$nat_transpose ;; matmul) nat=$nat_matmul ;;
    esac
    t="t_$k"
    native_ms[$k]+=" $nat"
    tesserac_ms[$k]+=" ${!t}"
    ratios[$k]+=" $(awk -v a="$nat" -v b="${!t}" 'BEGIN { printf "%.3f", a / b }')"
  done
done

median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
lowest() { tr ' ' '\n' | grep -v '^$' | sort -g | head -1; }
highest() { tr ' ' '\n' | grep -v '^$' | sort -g | tail -1; }
echo
printf '%-34s %11s %12s   %-24s %s\n' kernel "native ms" "tesserac ms" "ratio: median [min, max]" "target"
met=0
for k in $kernels; do
  med=$(median <<<"${ratios[$k]}")
  ok=$(awk -v r="$med" -v t="${target[$k]}" 'BEGIN { print (r >= t) ? "met" : "NOT met" }')
  [[ $ok == met ]] && met=$((met + 1))
  printf '%-34s %11.2f %12.2f   %5.2f [%5.2f, %5.2f]        >= %s %s\n' "${label[$k]}" "$(median <<<"${native_ms[$k]}")" \
    "$(median <<<"${tesserac_ms[$k]}")" "$med" "$(lowest <<<"${ratios[$k]}")" "$(highest <<<"${ratios[$k]}")" "${target[$k]}" "$ok"
done
echo
echo "targets met: $met of 5 (ratio = native time / tesserac time, median of $rounds rounds, each the best of $repeat)"
echo "$(date -u '+%Y-%m-%d %H:%M UTC'); $(lscpu | sed -nE 's/^Model name: +//p' | head -1), $(nproc) cores;" \
  "threads ${TESSERA_CPU_THREADS:-$(nproc)}; load average $(cut -d' ' -f1-3 /proc/loadavg); $("$tesserac" --version | head -1)"
