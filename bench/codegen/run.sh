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
# --emit=cubin gives it (-O3 --split-compile 2: two entries per kernel;
# docs/codegen.md; --emit=cubin starts ptxas before the PTX is made, so
# its time is less than the sum), and that ptxas time over nvcc's: the
# floor, what tesserac's ratio would be if everything but ptxas took no time.
# Registers and spills come from ptxas -v: nvcc's `-Xptxas -v`, and for
# tesserac ptxas -v run on `tesserac --emit=ptx` with the options tesserac
# passes to ptxas (-arch=sm_XX -O3), per entry: tesserac's module holds the
# general kernel K and its contiguous variant K$contiguous (docs/abi.md). Two
# comparisons, each with PTX instruction counts (instructions in the entry's
# body, from `--emit=ptx` and `nvcc -ptx`):
#   - the contiguous variant against nvcc on the natural CUDA twin
#     (bench/reference/natural/K.cu: __restrict__ pointers, unit stride, int
#     sizes), the code a CUDA programmer writes;
#   - the general kernel against nvcc on the stride-faithful twin
#     (bench/reference/K.cu: the same ABI, every access through its stride).
# Register counts are cross-checked against the counts recorded in the
# cubins themselves (sm_80: the .text.K section's sh_info >> 24; sm_90:
# EIATTR_REGCOUNT in .nv.info) when readelf is present. Then the kernels of
# examples/*.tsr: registers, spills and PTX instructions of both variants
# (no CUDA twins).
#
# Targets (issue 5, issue 19): tesserac's time at most 0.10x nvcc's; the
# contiguous variant no more registers than nvcc's natural code, the general
# kernel no more than nvcc's faithful code, no spills anywhere.
#
# Environment: CUDA_PATH (default /usr/local/cuda), ARCHS, KERNELS,
# EXAMPLES (default: every examples/*.tsr; "none" to skip them).
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
# ptxas_entries LOG: "NAME REGS SPILL_STORES SPILL_LOADS" per entry of a ptxas -v log.
ptxas_entries() {
  awk '/Compiling entry function/ { match($0, /'"'"'[^'"'"']*'"'"'/); name = substr($0, RSTART + 1, RLENGTH - 2) }
       /bytes spill stores/ { for (i = 1; i <= NF; i++) { if ($(i+1) == "bytes" && $(i+3) == "stores,") st = $i; if ($(i+1) == "bytes" && $(i+3) == "loads") ld = $i } }
       /Used [0-9]+ registers/ { for (i = 1; i <= NF; i++) if ($i == "Used") r = $(i+1); print name, r, st, ld }' "$1"
}
# entry_field LOG NAME FIELD: a field (2 registers, 3 spill stores, 4 spill loads) of entry NAME.
entry_field() { ptxas_entries "$1" | awk -v n="$2" -v f="$3" '$1 == n { print $f; exit }'; }
# ptx_instructions PTX NAME: the instructions in entry NAME's body (not
# directives, labels, braces or comments).
ptx_instructions() {
  awk -v n="$2" '$0 ~ "^\\.visible \\.entry " n "\\(" { inside = 1; next }
                 inside && /^}/ { exit }
                 inside && /^\t[a-z@]/ && !/^\t\/\// { count++ }
                 END { print count + 0 }' "$1"
}
# elf_regs CUBIN KERNEL: the register count recorded in the cubin for KERNEL,
# or "-": the .text.KERNEL section's sh_info >> 24 (sm_80 cubins), else the
# EIATTR_REGCOUNT attributes of .nv.info (04 2f 08 00, symbol, count: sm_90),
# all of them (several kernels per cubin): "a b".
elf_regs() {
  command -v readelf >/dev/null || { echo "-"; return; }
  local info off size
  info=$(readelf -SW "$1" 2>/dev/null | awk -v s=".text.$2" '{ for (i = 1; i <= NF; i++) if ($i == s) print $(NF - 1) }' | head -1)
  if [[ -n "$info" && $(( info >> 24 )) -gt 0 ]]; then echo $(( info >> 24 )); return; fi
  read -r off size < <(readelf -SW "$1" 2>/dev/null | awk '{ for (i = 1; i <= NF; i++) if ($i == ".nv.info") print $(i + 3), $(i + 4) }' | head -1)
  [[ -n "$off" ]] || { echo "-"; return; }
  local hex counts=""
  # (mawk has no strtonum: awk prints the hex words, bash converts them.)
  for hex in $(od -An -tx1 -v -j $((16#$off)) -N $((16#$size)) "$1" | tr -s ' \n' ' ' |
    awk '{ for (i = 1; i + 11 <= NF; i++) if ($i == "04" && $(i+1) == "2f" && $(i+2) == "08" && $(i+3) == "00")
             print $(i+11) $(i+10) $(i+9) $(i+8) }'); do
    counts+="$(( 16#$hex )) "
  done
  echo "${counts:--}"
}
# in_list VALUE "LIST": whether VALUE is one of the words of LIST, or LIST is "-".
in_list() { [[ "$2" == "-" ]] && return 0; for w in $2; do [[ "$w" == "$1" ]] && return 0; done; return 1; }

echo "bench/codegen: $("$tesserac" --version 2>/dev/null | head -1) vs $("$nvcc" --version | tail -2 | head -1)"
echo "host: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); $repeat runs each, best [median] wall-clock ms; ratio of the bests"
echo "(ptx: tesserac --emit=ptx; ptxas: ptxas -arch -O3 --split-compile 2 alone on that PTX, as --emit=cubin runs it for two entries; floor: ptxas / nvcc)"
echo "(registers and PTX instructions: contiguous variant / nvcc natural twin; general kernel / nvcc faithful twin)"
echo
printf '%-13s %-6s | %17s %7s %7s %17s %6s %-4s %6s | %-11s %-4s %-11s %-4s | %-9s %-9s | %s\n' \
  kernel arch "tesserac" "(ptx" "ptxas)" "nvcc" ratio "<=.1" floor "regs contig" "<=" "regs gen" "<=" "instr con" "instr gen" "spills t/n"
printf -- '-%.0s' {1..170}; echo
time_met=0 time_total=0 natural_met=0 faithful_met=0 reg_total=0 mismatch=""
for k in $kernels; do
  for arch in $archs; do
    tsr="$here/$k.tsr" cu="$ref/$k.cu" natural="$ref/natural/$k.cu"
    tt="" nt="" pt="" at=""
    for ((i = 0; i < repeat; i++)); do
      tt+=" $(time_ms "$tesserac" --emit=cubin -arch="$arch" "$tsr" -o "$work/t.cubin")"
      nt+=" $(time_ms "$nvcc" -cubin -arch="$arch" -O3 "$cu" -o "$work/n.cubin")"
      # The two halves of tesserac's time: to PTX, and the ptxas it spawns.
      pt+=" $(time_ms "$tesserac" --emit=ptx -arch="$arch" "$tsr" -o "$work/t.ptx")"
      at+=" $(time_ms "$ptxas" -arch="$arch" -O3 --split-compile 2 "$work/t.ptx" -o "$work/t2.cubin")"
    done
    tmed=$(median <<<"$tt") tbest=$(best <<<"$tt")
    nmed=$(median <<<"$nt") nbest=$(best <<<"$nt")
    pbest=$(best <<<"$pt") abest=$(best <<<"$at")
    ratio=$(awk -v a="$tbest" -v b="$nbest" 'BEGIN { printf "%.3f", a / b }')
    floor=$(awk -v a="$abest" -v b="$nbest" 'BEGIN { printf "%.3f", a / b }')
    tok=$(awk -v r="$ratio" 'BEGIN { print (r <= 0.10) ? "yes" : "no" }')

    # Registers, spills and instructions: tesserac's two entries, nvcc's two twins.
    "$tesserac" --emit=ptx -arch="$arch" "$tsr" -o "$work/t.ptx"
    "$ptxas" -arch="$arch" -O3 -v "$work/t.ptx" -o "$work/t2.cubin" >"$work/tv.log" 2>&1
    "$tesserac" --emit=cubin -arch="$arch" "$tsr" -o "$work/t.cubin"
    "$nvcc" -cubin -arch="$arch" -O3 -Xptxas -v "$cu" -o "$work/n.cubin" >"$work/nv.log" 2>&1
    "$nvcc" -cubin -arch="$arch" -O3 -Xptxas -v "$natural" -o "$work/nn.cubin" >"$work/nn.log" 2>&1
    "$nvcc" -ptx -arch="$arch" -O3 "$cu" -o "$work/n.ptx"
    "$nvcc" -ptx -arch="$arch" -O3 "$natural" -o "$work/nn.ptx"
    variant="$k\$contiguous"
    creg=$(entry_field "$work/tv.log" "$variant" 2) greg=$(entry_field "$work/tv.log" "$k" 2)
    nreg=$(entry_field "$work/nn.log" "$k" 2) freg=$(entry_field "$work/nv.log" "$k" 2)
    spill_t=$(ptxas_entries "$work/tv.log" | awk '{ s += $3 + $4 } END { print s + 0 }')
    spill_n=$(cat "$work/nv.log" "$work/nn.log" | sed -nE 's/.* ([0-9]+) bytes spill (stores|loads).*/\1/p' | awk '{ s += $1 } END { print s + 0 }')
    cins=$(ptx_instructions "$work/t.ptx" "$k\\\$contiguous") gins=$(ptx_instructions "$work/t.ptx" "$k")
    nins=$(ptx_instructions "$work/nn.ptx" "$k") fins=$(ptx_instructions "$work/n.ptx" "$k")
    te=$(elf_regs "$work/t.cubin" "$variant")
    in_list "$creg" "$te" || mismatch+=" $variant/$arch(-v $creg, cubin $te)"
    te=$(elf_regs "$work/t.cubin" "$k")
    in_list "$greg" "$te" || mismatch+=" $k/$arch(-v $greg, cubin $te)"
    cok=$([[ $creg -le $nreg && $spill_t == 0 ]] && echo yes || echo no)
    gok=$([[ $greg -le $freg && $spill_t == 0 ]] && echo yes || echo no)

    time_total=$((time_total + 1)) reg_total=$((reg_total + 1))
    [[ $tok == yes ]] && time_met=$((time_met + 1))
    [[ $cok == yes ]] && natural_met=$((natural_met + 1))
    [[ $gok == yes ]] && faithful_met=$((faithful_met + 1))
    printf '%-13s %-6s | %8s [%6s] %7s %7s %8s [%6s] %6s %-4s %6s | %4s / %-4s %-4s %4s / %-4s %-4s | %3s / %-3s %3s / %-3s | %s / %s\n' \
      "$k" "$arch" "$tbest" "$tmed" "$pbest" "$abest" "$nbest" "$nmed" "$ratio" "$tok" "$floor" \
      "$creg" "$nreg" "$cok" "$greg" "$freg" "$gok" "$cins" "$nins" "$gins" "$fins" "$spill_t" "$spill_n"
  done
done
echo
echo "compile time, tesserac <= 0.10x nvcc: met for $time_met of $time_total"
echo "registers, contiguous variant <= nvcc natural CUDA, no spills: met for $natural_met of $reg_total"
echo "registers, general kernel <= nvcc stride-faithful CUDA, no spills: met for $faithful_met of $reg_total"
[[ -z "$mismatch" ]] && echo "register counts agree with the cubins' own records" \
  || echo "register counts differ from the cubins' records:$mismatch"

# The examples: both variants of every kernel, registers, spills, PTX instructions.
examples="${EXAMPLES:-$(ls "$here"/../../examples/*.tsr)}"
[[ "$examples" == none ]] && exit 0
echo
echo "examples/*.tsr: registers (spill bytes) and PTX instructions, general kernel and contiguous variant"
printf '%-48s %-6s | %-15s %-15s | %-9s %-9s\n' kernel arch "regs general" "regs contig" "instr gen" "instr con"
printf -- "-%.0s" {1..108}; echo
total_spills=0
for example in $examples; do
  for arch in $archs; do
    "$tesserac" --emit=ptx -arch="$arch" "$example" -o "$work/e.ptx" 2>/dev/null || continue
    "$ptxas" -arch="$arch" -O3 -v "$work/e.ptx" -o "$work/e.cubin" >"$work/ev.log" 2>&1 || continue
    while read -r name regs st ld; do
      [[ "$name" == *'$contiguous' ]] && continue
      cregs=$(entry_field "$work/ev.log" "$name\$contiguous" 2) cst=$(entry_field "$work/ev.log" "$name\$contiguous" 3)
      cld=$(entry_field "$work/ev.log" "$name\$contiguous" 4)
      total_spills=$((total_spills + st + ld + ${cst:-0} + ${cld:-0}))
      gins=$(ptx_instructions "$work/e.ptx" "$name")
      cins=$([[ -n "$cregs" ]] && ptx_instructions "$work/e.ptx" "$name\\\$contiguous" || echo "-")
      printf '%-48s %-6s | %-15s %-15s | %-9s %-9s\n' "$(basename "$example" .tsr):$name" "$arch" "$regs ($((st + ld)))" \
        "${cregs:--} ($(( ${cst:-0} + ${cld:-0} )))" "$gins" "$cins"
    done < <(ptxas_entries "$work/ev.log")
  done
done
echo "spill bytes in the examples' kernels: $total_spills"
