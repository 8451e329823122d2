#!/usr/bin/env bash
# Runs the whole test suite: installs what is missing, builds the `ci` preset
# (warnings are errors) and runs ctest (doctest unit tests, lit file tests,
# the diagnostic-coverage check); then the same under ASan+UBSan (`dev`).
#
#   scripts/test.sh                 both builds
#   scripts/test.sh --no-sanitizers only the ci build
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
  echo "== tesserac: configure, build and test preset '$preset'"
  cmake --preset "$preset" >/dev/null
  cmake --build --preset "$preset" -j "$jobs"
  ctest --preset "$preset" -j "$jobs"
}

if [ "$sanitizers" = 1 ]; then
  run_preset dev
fi
run_preset ci
