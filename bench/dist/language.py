"""bench/dist: the language's all_reduce, timed as the other two programs.

usage: language.py TESSERAC NP SMALLEST LARGEST [--overlap BYTES M REPEAT]

For each size from SMALLEST to LARGEST bytes (x4), runs
`mpirun -np NP tesserac run allreduce.tsr --func allreduce --arg x=X.npy
--time N` (about 1 GiB reduced per size, 10 to 20,000 calls, as
allreduce_bench.cpp) and prints, like it,
    language <bytes> <median microseconds> <bus bandwidth GB/s at the median>
where the median is rank 0's over its timed calls: whole calls of the
compiled @jit function (the host code, the result's allocation from the
context's cache, the runtime's checks and MPI_Allreduce).

With --overlap, instead: overlap.tsr's `overlapped` (an all_reduce of BYTES and an
independent M x M GEMM) REPEAT times with the pass and without
(--no-overlap-collectives), alternately, printing per run
    overlap on|off <median milliseconds>
"""
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))


def mpirun(np_ranks):
    command = ["mpirun", "--oversubscribe", "-np", str(np_ranks)]
    if os.geteuid() == 0:
        command.append("--allow-run-as-root")
    return command


def median_ms(command):
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"bench/dist: {' '.join(command)} failed:\n{done.stdout}{done.stderr}")
    return float(re.search(r"median ([0-9.]+) ms", done.stdout).group(1))


def main():
    tesserac, ranks, smallest, largest = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    with tempfile.TemporaryDirectory() as work:
        def base(source):
            return mpirun(ranks) + [tesserac, "run", os.path.join(here, source), "-D", f"RANKS={ranks}", "--device", "cpu",
                                                           "--no-bounds-check", "-q"]
        if "--overlap" in sys.argv:
            at = sys.argv.index("--overlap")
            size, m, repeat = int(sys.argv[at + 1]), int(sys.argv[at + 2]), int(sys.argv[at + 3])
            np.save(os.path.join(work, "x.npy"), (np.arange(size // 4) % 7).astype(np.float32))
            np.save(os.path.join(work, "a.npy"), (np.arange(m * m) % 5 * 0.01).reshape(m, m).astype(np.float32))
            for _ in range(repeat):
                for mode, extra in (("on", []), ("off", ["--no-overlap-collectives"])):
                    ms = median_ms(base("overlap.tsr") + extra + ["--func", "overlapped", "--arg", f"x={work}/x.npy",
                                                   "--arg", f"a={work}/a.npy", "--time", "50"])
                    print(f"overlap {mode} {ms:.4f}", flush=True)
            return
        size = smallest
        while size <= largest:
            np.save(os.path.join(work, "x.npy"), (np.arange(size // 4) % 7).astype(np.float32))
            calls = max(10, min(20000, (1 << 30) // size))
            ms = median_ms(base("allreduce.tsr") + ["--func", "allreduce", "--arg", f"x={work}/x.npy", "--time", str(calls)])
            seconds = ms / 1e3
            bus = size / seconds * 2.0 * (ranks - 1) / ranks / 1e9
            print(f"language {size} {seconds * 1e6:.2f} {bus:.3f}", flush=True)
            size *= 4


main()
