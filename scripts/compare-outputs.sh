#!/usr/bin/env bash
# Compares what two builds of tesserac make of every .tsr under tests/ and
# examples/, byte for byte: the check for a refactoring that must not change
# behaviour (docs/building-and-testing.md, "Comparing two compilers").
#
#   scripts/compare-outputs.sh BEFORE AFTER [WORK_DIR]
#
# BEFORE and AFTER are build trees, or copies of their parts: each has
# tools/tesserac and stdlib/ (the stdlib instances that tesserac built).
# Each compiler is run with its own instances (TESSERA_STDLIB_DIR) by
# scripts/snapshot-outputs.py: the Tile IR, the NVPTX LLVM IR, the PTX for
# sm_80 and sm_90a, the CPU target's LLVM IR and the AOT header of `-c`, or
# the diagnostics of a file that does not compile. The stdlib instances are
# compared too. WORK_DIR (default: a temporary folder) receives before/ and
# after/. Prints the counts; exits 0 when everything is identical, 1 when
# not (the differing files are listed).
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ $# -lt 2 ]]; then
  sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
before=$(realpath "$1")
after=$(realpath "$2")
work=${3:-$(mktemp -d)}
mkdir -p "$work"
for build in "$before" "$after"; do
  for part in tools/tesserac stdlib; do
    [[ -e "$build/$part" ]] || { echo "compare-outputs: $build/$part does not exist" >&2; exit 2; }
  done
done

rm -rf "$work/before" "$work/after"
/usr/bin/python3 scripts/snapshot-outputs.py --tesserac "$before/tools/tesserac" --stdlib-dir "$before/stdlib" \
  --out "$work/before"
/usr/bin/python3 scripts/snapshot-outputs.py --tesserac "$after/tools/tesserac" --stdlib-dir "$after/stdlib" \
  --out "$work/after"
mkdir -p "$work/before/stdlib-instances" "$work/after/stdlib-instances"
cp "$before"/stdlib/*.ir "$work/before/stdlib-instances/"
cp "$after"/stdlib/*.ir "$work/after/stdlib-instances/"

sources=$(find "$work/before" -name check.txt | wc -l)
outputs=$(cd "$work/before" && find . -type f | sort)
total=$(printf '%s\n' "$outputs" | wc -l)
failing=$(grep -L '^exit 0$' $(find "$work/before" -name check.txt) | wc -l)
different=$( (diff -rq "$work/before" "$work/after" || true) | tee "$work/differences.txt" | wc -l)
echo "compare-outputs: $sources source files ($failing rejected by the check), $total outputs compared" \
  "(stdlib instances included), $different different"
if [[ $different -ne 0 ]]; then
  cat "$work/differences.txt"
  exit 1
fi
