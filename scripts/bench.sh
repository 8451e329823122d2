#!/usr/bin/env bash
# Builds the release preset and runs the benchmarks under bench/.
# Benchmarks report throughput and ratios; they are never part of ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --preset release >/dev/null
cmake --build --preset release -j "$(nproc 2>/dev/null || echo 2)" --target frontend_bench tesserac dist_allreduce_bench
echo "== bench/frontend: lexer and parser throughput"
build/release/bench/frontend_bench "$@"
echo "== bench/cpu: the CPU target against g++ -O3"
bench/cpu/run.sh build/release/tools/tesserac
echo "== bench/stdlib: the stdlib kernels on the CPU target against NumPy"
if /usr/bin/python3 -c "import numpy" 2>/dev/null; then
  /usr/bin/python3 bench/stdlib/run.py --tesserac build/release/tools/tesserac
else
  echo "skipped: no NumPy for /usr/bin/python3 (python3-numpy)"
fi
echo "== bench/dist: all_reduce through the runtime against plain MPI"
bench/dist/run.sh build/release/bench/dist_allreduce_bench
