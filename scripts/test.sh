#!/usr/bin/env bash
# Runs the whole test suite: installs what is missing, then for the `dev`
# preset (ASan+UBSan) and the `ci` preset (-O2, warnings are errors):
# configure, build, ctest. The lit suite and the diagnostic-coverage check
# run once, in the dev half, under the sanitizers; the ci half runs
# everything else (its build with warnings as errors, the unit tests, the
# sweeps that compile every file for every target, the AOT install test).
#
#   scripts/test.sh                 both builds
#   scripts/test.sh --no-sanitizers only the ci build, with the lit suite
set -euo pipefail
cd "$(dirname "$0")/.."

sanitizers=1
for arg in "$@"; do
  case "$arg" in
    --no-sanitizers) sanitizers=0 ;;
    *) echo "usage: scripts/test.sh [--no-sanitizers]" >&2; exit 2 ;;
  esac
done

bash scripts/install-deps.sh
jobs=$(nproc 2>/dev/null || echo 2)

run_preset() {
  local preset=$1
  shift
  echo "== tesserac: configure, build and test preset '$preset'"
  cmake --preset "$preset" >/dev/null
  cmake --build --preset "$preset" -j "$jobs"
  ctest --preset "$preset" -j "$jobs" "$@"
}

if [ "$sanitizers" = 1 ]; then
  run_preset dev
  # The same lit suite again at -O2 would add a third of the suite's time
  # (CI runs on 2 cores); the sanitized run above ran every one of them.
  run_preset ci -E '^(lit\.conformance|diagnostics\.every-kind-tested)$'
else
  run_preset ci
fi
