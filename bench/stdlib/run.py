#!/usr/bin/env python3
"""bench/stdlib: the stdlib kernels on the CPU target against NumPy.

usage: bench/stdlib/run.py [--tesserac PATH] [--repeat N] [--threads T] [--only NAME...]

For each case, the inputs are generated with NumPy, the kernel is run with
`tesserac run --device cpu --no-bounds-check --time N` (after one checked
run; the minimum over N launches is reported) and the NumPy expression is
timed the same way (minimum over N calls, after one warm-up), on the same
machine and threads (TESSERA_CPU_THREADS and OpenBLAS's threads: --threads
T sets both, else both are left at their defaults, one per hardware
thread). The kernel's output is compared
with NumPy's so a fast wrong kernel cannot pass. Prints one line per case
and the machine, date and load average. Needs NumPy (python3-numpy, with
Debian's OpenBLAS).
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
stdlib = os.path.join(here, "..", "..", "stdlib")


def numpy_time(function, repeat):
    function()
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        best = min(best, time.perf_counter() - start)
    return best * 1e3


def tesserac_time(tesserac, work, source, kernel, grid, inputs, outputs, repeat, **scalars):
    command = [tesserac, "run", source, "--kernel", kernel, "--grid", ",".join(map(str, grid)), "--device", "cpu",
               "--no-bounds-check", "-q", "--time", str(repeat)]
    for name, array in inputs.items():
        path = os.path.join(work, f"{name}.npy")
        np.save(path, array)
        command += ["--arg", f"{name}={path}"]
    for name, value in scalars.items():
        command += ["--arg", f"{name}={'true' if value is True else 'false' if value is False else value}"]
    for name in outputs:
        command += ["--out", f"{name}={os.path.join(work, name + '.out.npy')}"]
    # The default point of an autotuned kernel (the GEMM): a fixed benchmark,
    # and the grid given fits that point only (no cache written either).
    done = subprocess.run(command, capture_output=True, text=True, check=True,
                          env={**os.environ, "TESSERA_AUTOTUNE": "0"})
    ms = float(re.search(r"min ([0-9.]+) ms", done.stdout + done.stderr).group(1))
    return ms, {name: np.load(os.path.join(work, name + ".out.npy")) for name in outputs}


def instantiate(work, file, **lines):
    source = open(os.path.join(stdlib, file)).read()
    for name, value in lines.items():
        source, count = re.subn(rf"^{name} = [^#\n]*", f"{name} = {value}", source, flags=re.M)
        assert count == 1, name
    path = os.path.join(work, f"{file[:-4]}-{'-'.join(map(str, lines.values())) or 'default'}.tsr")
    open(path, "w").write(source)
    return path


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tesserac", default=os.path.join(here, "..", "..", "build", "release", "tools", "tesserac"))
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--threads", help="TESSERA_CPU_THREADS and OPENBLAS_NUM_THREADS")
    parser.add_argument("--only", nargs="*")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    rows = []

    def report(name, ms_tesserac, ms_numpy, error):
        rows.append((name, ms_tesserac, ms_numpy))
        print(f"{name:<40} tesserac {ms_tesserac:9.2f} ms   numpy {ms_numpy:9.2f} ms   "
              f"ratio {ms_numpy / ms_tesserac:5.2f}   max error {error:.2g}", flush=True)

    def wanted(name):
        return not args.only or any(o in name for o in args.only)

    with tempfile.TemporaryDirectory() as work:
        # gemm (the GPU's form, staged in shared memory) and gemm_cpu (the
        # CPU target's form, which graph code on the CPU launches): one grid.
        for file, kernel in (("gemm.tsr", "gemm"), ("gemm_cpu.tsr", "gemm_cpu")):
            source = instantiate(work, file)
            for n in (512, 1024):
                name = f"{kernel} f32 {n}^3"
                if not wanted(name):
                    continue
                a = rng.standard_normal((1, n, n), dtype=np.float32)
                b = rng.standard_normal((1, n, n), dtype=np.float32)
                ms, out = tesserac_time(args.tesserac, work, source, kernel, (n // 128, n // 128, 1),
                                        {"A": a, "B": b, "C": np.zeros((1, n, n), np.float32)}, ["C"], args.repeat,
                                        alpha=1.0, beta=0.0)
                ref = a[0] @ b[0]
                report(name, ms, numpy_time(lambda: a[0] @ b[0], args.repeat), float(np.abs(out["C"][0] - ref).max()))

        r, c = 4096, 1024
        x = rng.standard_normal((r, c), dtype=np.float32)

        def np_softmax():
            e = np.exp(x - x.max(axis=1, keepdims=True))
            return e / e.sum(axis=1, keepdims=True)
        for lanes in (128, 32):
            name = f"softmax f32 {r} x {c}, {lanes} lanes"
            if wanted(name):
                ms, out = tesserac_time(args.tesserac, work, instantiate(work, "softmax.tsr", LANES=lanes), "softmax",
                                        (r,), {"x": x, "y": np.zeros_like(x)}, ["y"], args.repeat)
                report(name, ms, numpy_time(np_softmax, args.repeat), float(np.abs(out["y"] - np_softmax()).max()))

        w = rng.standard_normal(c, dtype=np.float32)
        bias = rng.standard_normal(c, dtype=np.float32)

        def np_layer_norm():
            mean = x.mean(axis=1, keepdims=True)
            return (x - mean) / np.sqrt(x.var(axis=1, keepdims=True) + 1e-5) * w + bias
        for lanes in (128, 32):
            name = f"layer_norm f32 {r} x {c}, {lanes} lanes"
            if wanted(name):
                ms, out = tesserac_time(args.tesserac, work, instantiate(work, "norm.tsr", LANES=lanes), "layer_norm",
                                        (r,), {"x": x, "weight": w, "bias": bias, "y": np.zeros_like(x),
                                               "mean": np.zeros(r, np.float32), "rstd": np.zeros(r, np.float32)},
                                        ["y"], args.repeat, eps=1e-5)
                report(name, ms, numpy_time(np_layer_norm, args.repeat), float(np.abs(out["y"] - np_layer_norm()).max()))

        name = f"reduce_rows sum f32 {r} x {c}"
        if wanted(name):
            ms, out = tesserac_time(args.tesserac, work, instantiate(work, "reduce.tsr"), "reduce_rows", (r,),
                                    {"x": x, "out": np.zeros(r, np.float32)}, ["out"], args.repeat, op=0)
            report(name, ms, numpy_time(lambda: x.sum(axis=1), args.repeat), float(np.abs(out["out"] - x.sum(axis=1)).max()))

        bh, s, d = 8, 512, 64
        name = f"flash_attention f32 BH {bh}, S {s}, D {d}, causal"
        if wanted(name):
            q, k, v = (rng.standard_normal((bh, s, d), dtype=np.float32) for _ in range(3))
            scale = float(np.float32(1 / np.sqrt(d)))
            mask = np.triu(np.full((s, s), -np.inf, np.float32), 1)

            def np_attention():
                scores = scale * q @ k.transpose(0, 2, 1) + mask
                e = np.exp(scores - scores.max(axis=2, keepdims=True))
                return (e / e.sum(axis=2, keepdims=True)) @ v
            ms, out = tesserac_time(args.tesserac, work, instantiate(work, "attention.tsr"), "flash_attention",
                                    ((s + 31) // 32, bh), {"q": q, "k": k, "v": v, "o": np.zeros_like(q),
                                                          "lse": np.zeros((bh, s), np.float32)},
                                    ["o"], args.repeat, scale=scale, causal=True)
            report(name, ms, numpy_time(np_attention, args.repeat), float(np.abs(out["o"] - np_attention()).max()))

    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")),
               platform.processor())
    threads = os.environ.get("TESSERA_CPU_THREADS", f"{os.cpu_count()} (all)")
    print(f"{datetime.date.today()}, {cpu}, {os.cpu_count()} hardware threads, {threads} used, NumPy {np.__version__}, "
          f"load average {os.getloadavg()[0]:.1f}; ratio = numpy time / tesserac time (> 1: tesserac faster)")


if __name__ == "__main__":
    sys.exit(main())
