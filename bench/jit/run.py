#!/usr/bin/env python3
"""bench/jit: @jit functions on the CPU target against NumPy.

usage: bench/jit/run.py [--tesserac PATH] [--repeat N] [--threads T] [--only NAME...]

Each function of bench/jit/jit.tsr runs with `tesserac run --func F --time N`
(whole calls, wall-clock: host code, generated kernels, the stdlib GEMM and
allocations; the median of N calls after one checked call) and the same
computation in NumPy is timed the same way (median of N calls after one
warm-up), on the same machine and threads (--threads T sets
TESSERA_CPU_THREADS and OPENBLAS_NUM_THREADS; else both use every hardware
thread). Results are compared with NumPy's first, so a fast wrong function
cannot pass. Goals (issue 20): the fused softmax, layer norm and
elementwise chain faster than NumPy (one pass instead of one per op); GEMM
f32 1024^3 at least 0.5x OpenBLAS. Prints one line per case, then the
machine, date and load average.
"""
import argparse
import datetime
import os
import platform
import re
import subprocess
import sys
import tempfile
import time

if "--threads" in sys.argv:   # before NumPy starts OpenBLAS's threads
    threads = sys.argv[sys.argv.index("--threads") + 1]
    os.environ["OPENBLAS_NUM_THREADS"] = os.environ["TESSERA_CPU_THREADS"] = threads

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
source = os.path.join(here, "jit.tsr")


def numpy_median(function, repeat):
    function()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return sorted(times)[len(times) // 2] * 1e3


def tesserac_median(tesserac, work, function, inputs, repeat):
    command = [tesserac, "run", source, "--func", function, "--device", "cpu", "--no-bounds-check", "-q", "--time", str(repeat),
               "--out", "result=" + os.path.join(work, "result.npy")]
    for name, array in inputs.items():
        path = os.path.join(work, f"{name}.npy")
        np.save(path, array)
        command += ["--arg", f"{name}={path}"]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"bench/jit: {function}: tesserac run failed:\n{done.stderr}")
    ms = float(re.search(r"median ([0-9.]+) ms", done.stdout + done.stderr).group(1))
    return ms, np.load(os.path.join(work, "result.npy"))


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def layer_norm(x, gamma, beta):
    mu = x.mean(axis=-1, keepdims=True)
    d = x - mu
    return d / np.sqrt((d * d).mean(axis=-1, keepdims=True) + 1e-5) * gamma + beta


def chain(x, y):
    return np.maximum(x * 1.5 + y, 0) * (1 / (1 + np.exp(-y))) - 0.25 * x


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tesserac", default=None)
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--threads", default=None)
    parser.add_argument("--only", nargs="*", default=None)
    args = parser.parse_args()
    tesserac = args.tesserac
    if tesserac is None:
        for preset in ("release", "ci", "dev"):
            candidate = os.path.join(here, "..", "..", "build", preset, "tools", "tesserac")
            if os.path.exists(candidate):
                tesserac = candidate
                break
    rng = np.random.default_rng(0)
    rows, cols, n, size = 4096, 1024, 1 << 22, 1024
    x2 = rng.standard_normal((rows, cols), dtype=np.float32)
    gamma = rng.standard_normal(cols, dtype=np.float32)
    beta = rng.standard_normal(cols, dtype=np.float32)
    v1 = rng.standard_normal(n, dtype=np.float32)
    v2 = rng.standard_normal(n, dtype=np.float32)
    a = rng.standard_normal((size, size), dtype=np.float32)
    b = rng.standard_normal((size, size), dtype=np.float32)
    cases = [
        ("softmax 4096x1024", "softmax_rows", {"x": x2}, lambda: softmax(x2), 1e-5),
        ("layer norm 4096x1024", "layer_norm_rows", {"x": x2, "gamma": gamma, "beta": beta},
         lambda: layer_norm(x2, gamma, beta), 1e-4),
        ("elementwise chain 4M", "elementwise_chain", {"x": v1, "y": v2}, lambda: chain(v1, v2), 1e-5),
        ("gemm f32 1024^3", "gemm", {"a": a, "b": b}, lambda: a @ b, 1e-3),
    ]
    print(f"bench/jit: {os.path.relpath(tesserac)} against NumPy {np.__version__}, median of {args.repeat}")
    with tempfile.TemporaryDirectory() as work:
        for title, function, inputs, reference, tolerance in cases:
            if args.only and function not in args.only:
                continue
            ms, got = tesserac_median(tesserac, work, function, inputs, args.repeat)
            want = reference()
            scale = max(1.0, float(np.abs(want).max()))
            error = float(np.abs(got.astype(np.float64) - want).max()) / scale
            if got.shape != want.shape or error > tolerance:
                sys.exit(f"bench/jit: {function}: wrong result (shape {got.shape} vs {want.shape}, error {error:.2e})")
            numpy_ms = numpy_median(reference, args.repeat)
            extra = ""
            if function == "gemm":
                extra = f"  ({2 * size ** 3 / ms / 1e6:.1f} GFLOP/s vs {2 * size ** 3 / numpy_ms / 1e6:.1f})"
            print(f"  {title:24s} tesserac {ms:9.3f} ms   numpy {numpy_ms:9.3f} ms   {numpy_ms / ms:5.2f}x NumPy{extra}")
    load = os.getloadavg()
    print(f"  machine: {platform.machine()} {os.cpu_count()} hardware threads, {platform.node()}; "
          f"{datetime.datetime.now().strftime('%Y-%m-%d %H:%M')}; load average {load[0]:.2f}")


if __name__ == "__main__":
    main()
