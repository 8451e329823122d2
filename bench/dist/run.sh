#!/usr/bin/env bash
# bench/dist: all_reduce bus bandwidth on CPU ranks through the runtime (its
# MPI backend) against the same operation in a plain MPI C program, side by
# side: f32 sums from 4 KiB to 64 MiB on NP ranks of this machine.
#   usage: bench/dist/run.sh [BENCH] [NP] [REPEAT] [TESSERAC]
# BENCH is the runtime's benchmark (build/release/bench/dist_allreduce_bench),
# TESSERAC the compiler (default: beside BENCH, ../tools/tesserac): the
# language's all_reduce (allreduce.tsr through `tesserac run --func --time`,
# language.py) is the third program. Then the overlap case (overlap.tsr: an
# all_reduce of 4 MiB and an independent 256 x 256 GEMM) with the pass
# overlap-collectives and without (--no-overlap-collectives), REPEAT times each.
# For each size, the two programs run alternately, REPEAT times each
# (default 5), so that both meet the same load on a shared machine; each run
# reports the median time of its iterations, and the best of the runs is
# compared. Goal: the runtime at >= 0.9x plain MPI.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
bench="${1:-$here/../../build/release/bench/dist_allreduce_bench}"
np="${2:-2}"
repeat="${3:-5}"
tesserac="${4:-$(dirname "$bench")/../tools/tesserac}"
python="${PYTHON:-/usr/bin/python3}"
if ! command -v mpirun >/dev/null || ! command -v mpicc >/dev/null; then
  echo "bench/dist: mpirun or mpicc not found (apt-get install openmpi-bin libopenmpi-dev); skipped"
  exit 0
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mpicc -O2 "$here/mpi_allreduce.c" -o "$work/mpi_allreduce"
flags=(--oversubscribe -np "$np")
if [ "$(id -u)" = 0 ]; then flags+=(--allow-run-as-root); fi
for ((i = 0; i < repeat; i++)); do
  for ((bytes = 4096; bytes <= 64 << 20; bytes *= 4)); do
    mpirun "${flags[@]}" "$bench" "$bytes" "$bytes" >>"$work/runtime.txt"
    mpirun "${flags[@]}" "$work/mpi_allreduce" "$bytes" "$bytes" >>"$work/mpi.txt"
    "$python" "$here/language.py" "$tesserac" "$np" "$bytes" "$bytes" >>"$work/language.txt"
  done
done
echo "bench/dist: all_reduce f32 sum, $np ranks, best of $repeat runs each ($(date -u +%Y-%m-%d), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg))"
# Per size and program: the best (highest) and the median bus bandwidth of
# the runs; the ratios compare the bests with plain MPI's.
sort -k1,1 -k2,2n -k4,4g "$work/runtime.txt" "$work/language.txt" "$work/mpi.txt" | awk '
  { key = $1 " " $2; v[key, ++n[key]] = $4; if (!($2 in seen)) { seen[$2] = 1; order[m++] = $2 } }
  END {
    printf "%10s %22s %22s %22s %8s %8s\n", "bytes", "runtime GB/s best/med", "language GB/s best/med", "MPI GB/s best/med", "runtime", "language"
    # sizes in ascending order (insertion sort: a handful of them)
    for (i = 1; i < m; i++) for (j = i; j > 0 && order[j - 1] + 0 > order[j] + 0; j--) { t = order[j]; order[j] = order[j - 1]; order[j - 1] = t }
    for (i = 0; i < m; i++) {
      s = order[i]; r = "runtime " s; l = "language " s; p = "mpi " s
      rb = v[r, n[r]]; rm = v[r, int((n[r] + 1) / 2)]; lb = v[l, n[l]]; lm = v[l, int((n[l] + 1) / 2)]
      pb = v[p, n[p]]; pm = v[p, int((n[p] + 1) / 2)]
      printf "%10d %13.3f / %6.3f %13.3f / %6.3f %13.3f / %6.3f %7.2fx %7.2fx\n", s, rb, rm, lb, lm, pb, pm,
             (pb > 0 ? rb / pb : 0), (pb > 0 ? lb / pb : 0)
    }
  }'
echo "bench/dist: overlap.tsr (all_reduce of 4 MiB + an independent 256 x 256 GEMM), $np ranks, median of 50 calls per run, $repeat runs each ($(cut -d' ' -f1-3 /proc/loadavg))"
"$python" "$here/language.py" "$tesserac" "$np" 0 0 --overlap $((4 << 20)) 256 "$repeat" | sort -k2,2 -k3,3g | awk '
  { v[$2, ++n[$2]] = $3 }
  END {
    for (k = 0; k < 2; k++) {
      mode = k ? "off" : "on"
      printf "  %-40s best %8.3f ms, median %8.3f ms\n", mode == "on" ? "overlap-collectives (start, GEMM, wait)" : "--no-overlap-collectives (blocking)", v[mode, 1], v[mode, int((n[mode] + 1) / 2)]
    }
    printf "  with the pass / without (best): %.2fx the time\n", v["on", 1] / v["off", 1]
  }'
