#!/usr/bin/env python3
"""bench/tune: autotuned kernels on the CPU target, tuned against their
default point (docs/autotuning.md, "Benchmark").

usage: run.py [--tesserac PATH] [--repeat N] [--threads T]

For each case: the median of N launches at the default point
(TESSERA_AUTOTUNE=0), then a tuning run (tesserac run --tune, the cache in a
temporary directory) with the median of N launches of the variant it chose,
and the time the tuning took. Outputs are checked against NumPy. Needs NumPy.
"""
import argparse
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
stdlib = os.path.join(here, "..", "..", "stdlib")


def run(tesserac, work, source, kernel, grid, inputs, outputs, repeat, tune, **scalars):
    command = [tesserac, "run", source, "--kernel", kernel, "--grid", grid, "--device", "cpu", "--no-bounds-check",
               "--time", str(repeat)]
    for name, array in inputs.items():
        path = os.path.join(work, f"{name}.npy")
        np.save(path, array)
        command += ["--arg", f"{name}={path}"]
    for name, value in scalars.items():
        command += ["--arg", f"{name}={value}"]
    for name in outputs:
        command += ["--out", f"{name}={os.path.join(work, name + '.out.npy')}"]
    env = dict(os.environ, TESSERA_CACHE_DIR=os.path.join(work, "cache"), TESSERA_AUTOTUNE="1" if tune else "0")
    if tune:
        command.append("--tune")
    done = subprocess.run(command, capture_output=True, text=True, check=True, env=env)
    text = done.stdout + done.stderr
    median = float(re.search(r"median ([0-9.]+) ms over", text).group(1))
    point = re.search(r"'" + kernel + r"' at ([^,(]*(?:, [A-Z]+=[0-9]+)*)", text)
    tuned = re.search(r"tuned '" + kernel + r"' for key .*?: (.*), median [0-9.]+ ms \((\d+) variants timed in ([0-9.]+) ms\)",
                      text)
    results = {name: np.load(os.path.join(work, name + ".out.npy")) for name in outputs}
    if tuned:
        return median, tuned.group(1), int(tuned.group(2)), float(tuned.group(3)), results
    return median, point.group(1) if point else "?", 0, 0.0, results


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tesserac", default=os.path.join(here, "..", "..", "build", "release", "tools", "tesserac"))
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--threads", help="TESSERA_CPU_THREADS")
    args = parser.parse_args()
    if args.threads:
        os.environ["TESSERA_CPU_THREADS"] = args.threads
    rng = np.random.default_rng(0)
    cases = []
    n = 512
    a = rng.standard_normal((1, n, n), dtype=np.float32)
    b = rng.standard_normal((1, n, n), dtype=np.float32)
    c = np.zeros((1, n, n), dtype=np.float32)
    cases.append((f"stdlib gemm f32 {n}^3", os.path.join(stdlib, "gemm.tsr"), "gemm", "cdiv(N, BN), cdiv(M, BM), BATCH",
                  {"A": a, "B": b, "C": c}, ["C"], {"alpha": 1, "beta": 0},
                  lambda r: np.allclose(r["C"], a @ b, rtol=1e-3, atol=1e-2)))
    m = 1 << 22
    x = rng.standard_normal(m, dtype=np.float32)
    cases.append((f"reduction f32 {m}", os.path.join(here, "reduction.tsr"), "total", "cdiv(n, 256 * EPL)",
                  {"x": x, "out": np.zeros(1, dtype=np.float32)}, ["out"], {},
                  lambda r: abs(float(r["out"][0]) - float(x.astype(np.float64).sum())) < 1e-2 * np.sqrt(m)))
    s = 1 << 16
    xs = rng.standard_normal(s, dtype=np.float32)
    cases.append((f"grid-stride scale f32 {s}", os.path.join(here, "groups.tsr"), "scale", "G",
                  {"x": xs, "y": np.zeros(s, dtype=np.float32)}, ["y"], {"alpha": 2},
                  lambda r: np.array_equal(r["y"], np.float32(2) * xs)))
    print(f"{'case':<28} {'default':>22} {'tuned':>22} {'gain':>6} {'tuning':>10}")
    for name, source, kernel, grid, inputs, outputs, scalars, check in cases:
        with tempfile.TemporaryDirectory() as work:
            base, base_point, _, _, r0 = run(args.tesserac, work, source, kernel, grid, inputs, outputs, args.repeat,
                                             False, **scalars)
            tuned, point, count, tuning_ms, r1 = run(args.tesserac, work, source, kernel, grid, inputs, outputs,
                                                     args.repeat, True, **scalars)
            ok = check(r0) and check(r1)
            print(f"{name:<28} {base:>9.3f} ms {base_point:>9} {tuned:>9.3f} ms {point:>9} {base / tuned:>5.2f}x "
                  f"{tuning_ms:>7.0f} ms ({count} variants){'' if ok else '  WRONG RESULT'}")
            # What the tuner measured: every variant's median while tuning.
            for cache in glob.glob(os.path.join(work, "cache", "*.json")):
                for entry in json.load(open(cache))["entries"]:
                    times = ", ".join(f"{p} {ms:.3f}" for p, ms in sorted(entry["median_ms"].items(), key=lambda i: i[1]))
                    print(f"    tuning medians (ms): {times}")
            if not ok:
                return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
