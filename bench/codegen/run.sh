#!/usr/bin/env bash
# bench/codegen: tesserac against nvcc on the same kernels, side by side:
# compile time to a cubin and ptxas's register and spill counts.
#
# usage: bench/codegen/run.sh [TESSERAC] [REPEAT]
#
# For each kernel K of bench/codegen/K.tsr (twin: bench/reference/K.cu) and
# each architecture (ARCHS, default "sm_80 sm_90"):
#   tesserac --emit=cubin -arch=sm_XX K.tsr -o K.cubin
#   nvcc -cubin -arch=sm_XX -O3 K.cu -o K.cubin     (device code only)
# timed REPEAT times each (wall clock, interleaved). The best run is reported
# and compared (the least disturbed by other work on a shared machine), the
# median in brackets; also the best of each of tesserac's two halves,
# `tesserac --emit=ptx` and ptxas run alone on that PTX with the options
# --emit=cubin gives it (--emit=cubin starts ptxas before the PTX is made, so
# its time is less than the sum), and that ptxas time over nvcc's: the
# floor, what tesserac's ratio would be if everything but ptxas took no time.
# Registers and spills come from ptxas -v: nvcc's `-Xptxas -v`, and for
# tesserac its `--ptxas-options=-v` when it prints ptxas's report, else
# ptxas -v run on `tesserac --emit=ptx` with the options tesserac passes to
# ptxas (-arch=sm_XX -O3). Both are cross-checked against the register count
# recorded in the cubins themselves (sm_80: the .text.K section's sh_info >>
# 24; sm_90: EIATTR_REGCOUNT in .nv.info) when readelf is present.
#
# Targets (issue 5): tesserac's time at most 0.10x nvcc's; no more registers
# than nvcc for the same kernel (and no spills).
#
# Environment: CUDA_PATH (default /usr/local/cuda), ARCHS, KERNELS.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
ref="$here/../reference"
tesserac="${1:-$here/../../build/release/tools/tesserac}"
repeat="${2:-5}"
cuda="${CUDA_PATH:-/usr/local/cuda}"
nvcc="$cuda/bin/nvcc"
ptxas="$cuda/bin/ptxas"
archs="${ARCHS:-sm_80 sm_90}"
kernels="${KERNELS:-saxpy block_reduce transpose matmul}"

if [[ ! -x "$tesserac" ]]; then
  echo "bench/codegen: skipped: no tesserac at $tesserac (build it, or pass its path)"
  exit 0
fi
for tool in "$nvcc" "$ptxas"; do
  if [[ ! -x "$tool" ]]; then
    echo "bench/codegen: skipped: $tool not found (set CUDA_PATH to a CUDA Toolkit)"
    exit 0
  fi
done

if [[ -z ${EPOCHREALTIME:-} ]]; then
  echo "bench/codegen: skipped: needs bash 5 (EPOCHREALTIME) for its clock"
  exit 0
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# time_ms CMD...: the wall-clock milliseconds of one run (stdout/stderr to
# $work/log). The clock is bash's EPOCHREALTIME, read without starting a
# process (`date` would add its own 1-2 ms to every run).
time_ms() {
  local t0 t1
  t0=$EPOCHREALTIME
  "$@" >"$work/log" 2>&1 || { echo "bench/codegen: failed: $*" >&2; cat "$work/log" >&2; exit 1; }
  t1=$EPOCHREALTIME
  awk -v a="${t0/,/.}" -v b="${t1/,/.}" 'BEGIN { printf "%.1f", (b - a) * 1e3 }'
}
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.1f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
best() { tr ' ' '\n' | grep -v '^$' | sort -g | head -1; }
# ptxas_regs LOG: "REGS SPILL_STORE_BYTES SPILL_LOAD_BYTES" from a ptxas -v log (one kernel).
ptxas_regs() {
  local regs st ld
  regs=$(sed -nE 's/.*Used ([0-9]+) registers.*/\1/p' "$1" | head -1)
  st=$(sed -nE 's/.* ([0-9]+) bytes spill stores.*/\1/p' "$1" | head -1)
  ld=$(sed -nE 's/.* ([0-9]+) bytes spill loads.*/\1/p' "$1" | head -1)
  echo "${regs:-?} ${st:-?} ${ld:-?}"
}
# elf_regs CUBIN KERNEL: the register count recorded in the cubin, or "-":
# the .text.KERNEL section's sh_info >> 24 (sm_80 cubins), else the
# EIATTR_REGCOUNT attribute of .nv.info (04 2f 08 00, symbol, count: sm_90).
# One kernel per cubin here, so the first REGCOUNT is the kernel's.
elf_regs() {
  command -v readelf >/dev/null || { echo "-"; return; }
  local info off size
  info=$(readelf -SW "$1" 2>/dev/null | awk -v s=".text.$2" '{ for (i = 1; i <= NF; i++) if ($i == s) print $(NF - 1) }' | head -1)
  if [[ -n "$info" && $(( info >> 24 )) -gt 0 ]]; then echo $(( info >> 24 )); return; fi
  read -r off size < <(readelf -SW "$1" 2>/dev/null | awk '{ for (i = 1; i <= NF; i++) if ($i == ".nv.info") print $(i + 3), $(i + 4) }' | head -1)
  [[ -n "$off" ]] || { echo "-"; return; }
  local hex
  hex=$(od -An -tx1 -v -j $((16#$off)) -N $((16#$size)) "$1" | tr -s ' \n' ' ' |
    awk '{ for (i = 1; i + 11 <= NF; i++) if ($i == "04" && $(i+1) == "2f" && $(i+2) == "08" && $(i+3) == "00") {
             print $(i+11) $(i+10) $(i+9) $(i+8); exit } }')
  [[ -n "$hex" ]] && echo $(( 16#$hex )) || echo "-"
}

echo "bench/codegen: $("$tesserac" --version 2>/dev/null | head -1) vs $("$nvcc" --version | tail -2 | head -1)"
echo "host: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); $repeat runs each, best [median] wall-clock ms; ratio of the bests"
echo "(ptx: tesserac --emit=ptx; ptxas: ptxas -arch -O3 alone on that PTX, as --emit=cubin runs it; floor: ptxas / nvcc)"
echo
printf '%-13s %-6s | %17s %7s %7s %17s %6s %-4s %6s | %5s %5s %-4s | %9s %9s\n' \
  kernel arch "tesserac" "(ptx" "ptxas)" "nvcc" ratio "<=.1" floor "regs" "nvcc" "<=" "spill t" "spill n"
printf -- '-%.0s' {1..135}; echo
time_met=0 time_total=0 reg_met=0 reg_total=0 mismatch=""
for k in $kernels; do
  for arch in $archs; do
    tsr="$here/$k.tsr" cu="$ref/$k.cu"
    tt="" nt="" pt="" at=""
    for ((i = 0; i < repeat; i++)); do
      tt+=" $(time_ms "$tesserac" --emit=cubin -arch="$arch" "$tsr" -o "$work/t.cubin")"
      nt+=" $(time_ms "$nvcc" -cubin -arch="$arch" -O3 "$cu" -o "$work/n.cubin")"
      # The two halves of tesserac's time: to PTX, and the ptxas it spawns.
      pt+=" $(time_ms "$tesserac" --emit=ptx -arch="$arch" "$tsr" -o "$work/t.ptx")"
      at+=" $(time_ms "$ptxas" -arch="$arch" -O3 "$work/t.ptx" -o "$work/t2.cubin")"
    done
    tmed=$(median <<<"$tt") tbest=$(best <<<"$tt")
    nmed=$(median <<<"$nt") nbest=$(best <<<"$nt")
    pbest=$(best <<<"$pt") abest=$(best <<<"$at")
    ratio=$(awk -v a="$tbest" -v b="$nbest" 'BEGIN { printf "%.3f", a / b }')
    floor=$(awk -v a="$abest" -v b="$nbest" 'BEGIN { printf "%.3f", a / b }')
    tok=$(awk -v r="$ratio" 'BEGIN { print (r <= 0.10) ? "yes" : "no" }')

    # Registers and spills.
    "$tesserac" --emit=cubin -arch="$arch" --ptxas-options=-v "$tsr" -o "$work/t.cubin" >"$work/tv.log" 2>&1
    if ! grep -q "Used [0-9]* registers" "$work/tv.log"; then
      # tesserac keeps ptxas's report to itself on success: run the same ptxas
      # command on its PTX (the cubin's register count is checked below).
      "$tesserac" --emit=ptx -arch="$arch" "$tsr" -o "$work/t.ptx"
      "$ptxas" -arch="$arch" -O3 -v "$work/t.ptx" -o "$work/t2.cubin" >"$work/tv.log" 2>&1
    fi
    "$nvcc" -cubin -arch="$arch" -O3 -Xptxas -v "$cu" -o "$work/n.cubin" >"$work/nv.log" 2>&1
    read -r treg tst tld < <(ptxas_regs "$work/tv.log")
    read -r nreg nst nld < <(ptxas_regs "$work/nv.log")
    te=$(elf_regs "$work/t.cubin" "$k") ne=$(elf_regs "$work/n.cubin" "$k")
    [[ "$te" == "-" || "$te" == "$treg" ]] || mismatch+=" $k/$arch(tesserac: -v $treg, cubin $te)"
    [[ "$ne" == "-" || "$ne" == "$nreg" ]] || mismatch+=" $k/$arch(nvcc: -v $nreg, cubin $ne)"
    rok=$(( treg <= nreg && tst == 0 && tld == 0 )) && true
    rok=$([[ $rok == 1 ]] && echo yes || echo no)

    time_total=$((time_total + 1)) reg_total=$((reg_total + 1))
    [[ $tok == yes ]] && time_met=$((time_met + 1))
    [[ $rok == yes ]] && reg_met=$((reg_met + 1))
    printf '%-13s %-6s | %8s [%6s] %7s %7s %8s [%6s] %6s %-4s %6s | %5s %5s %-4s | %4s/%-4s %4s/%-4s\n' \
      "$k" "$arch" "$tbest" "$tmed" "$pbest" "$abest" "$nbest" "$nmed" "$ratio" "$tok" "$floor" "$treg" "$nreg" "$rok" "$tst" "$tld" "$nst" "$nld"
  done
done
echo
echo "compile time, tesserac <= 0.10x nvcc: met for $time_met of $time_total"
echo "registers, tesserac <= nvcc, no spills: met for $reg_met of $reg_total"
[[ -z "$mismatch" ]] && echo "register counts agree with the cubins' own records" \
  || echo "register counts differ from the cubins' records:$mismatch"
