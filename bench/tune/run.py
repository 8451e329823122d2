#!/usr/bin/env python3
"""bench/tune: autotuned kernels on the CPU target, tuned against their
default point (docs/autotuning.md, "Benchmark").

usage: run.py [--tesserac PATH] [--repeat N] [--threads T] [--only kernels|jit|gpu]

For each case: the median of N launches at the default point
(TESSERA_AUTOTUNE=0), then a tuning run (tesserac run --tune, the cache in a
temporary directory) with the median of N launches of the variant it chose,
and the time the tuning took. Then the @jit functions of jit_kernels.tsr,
whose generated kernels (and the stdlib flash attention's forward) are
tuned (docs/autotuning.md, "Generated kernels", "Stdlib kernels"):
the median of N calls compiled with TESSERA_AUTOTUNE=0 (every kernel at its
default point) against N calls with tuning on (the first call tunes; the
cache's choices and medians are printed). Outputs are checked against
NumPy. Needs NumPy.

On a CUDA device (tesserac run --device cuda:0 works) with libcublas, the
tuned stdlib GEMM against cuBLAS's SGEMM on the same sizes (CUDA events,
through ctypes); skipped with a line saying why otherwise.
"""
import argparse
import ctypes
import ctypes.util
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


def run_jit(tesserac, work, function, inputs, expect, repeat, tune, rtol=1e-5, atol=1e-5):
    """Median of `repeat` calls of @jit `function`, its result checked, and
    the tuning cache's entries (empty untuned)."""
    command = [tesserac, "run", os.path.join(here, "jit_kernels.tsr"), "--func", function, "--device", "cpu",
               "--no-bounds-check", "--time", str(repeat)]
    for name, array in inputs.items():
        path = os.path.join(work, f"{name}.npy")
        np.save(path, array)
        command += ["--arg", f"{name}={path}"]
    out = os.path.join(work, "result.npy")
    command += ["--out", f"result={out}"]
    cache = os.path.join(work, "cache-tuned" if tune else "cache-default")
    env = dict(os.environ, TESSERA_CACHE_DIR=cache, TESSERA_AUTOTUNE="1" if tune else "0")
    done = subprocess.run(command, capture_output=True, text=True, check=True, env=env)
    median = float(re.search(r"median ([0-9.]+) ms over", done.stdout + done.stderr).group(1))
    ok = np.allclose(np.load(out), expect, rtol=rtol, atol=atol)
    entries = []
    for path in glob.glob(os.path.join(cache, "*.json")):
        entries += json.load(open(path))["entries"]
    return median, ok, entries


def causal_attention(q, k, v):
    """softmax(q k^T / sqrt(D), causal) v in float64."""
    q, k, v = (a.astype(np.float64) for a in (q, k, v))
    s = q @ k.transpose(0, 2, 1) / np.sqrt(q.shape[-1])
    s = np.where(np.triu(np.ones(s.shape[-2:], bool), 1), -np.inf, s)
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return (e / e.sum(axis=-1, keepdims=True)) @ v


def gpu_gemm_against_cublas(tesserac, repeat):
    """The tuned stdlib GEMM on cuda:0 against cuBLAS SGEMM; None when skipped (printed why)."""
    with tempfile.TemporaryDirectory() as work:
        small = os.path.join(work, "x.npy")
        np.save(small, np.zeros(4, dtype=np.float32))
        probe = subprocess.run([tesserac, "run", os.path.join(here, "groups.tsr"), "--kernel", "scale", "--device",
                                "cuda:0", "--grid", "1", "--arg", "alpha=1", "--arg", f"x={small}", "--arg",
                                f"y={small}"], capture_output=True, text=True,
                               env=dict(os.environ, TESSERA_AUTOTUNE="0"))
    if probe.returncode != 0:
        print(f"gpu: skipped: no CUDA device ({(probe.stderr.strip().splitlines() or ['?'])[-1]})")
        return None
    names = [ctypes.util.find_library("cublas"), "libcublas.so", "libcublas.so.13", "libcublas.so.12"]
    cublas = cudart = None
    for name in [n for n in names if n]:
        try:
            cublas = ctypes.CDLL(name)
            break
        except OSError:
            continue
    for name in [ctypes.util.find_library("cudart"), "libcudart.so", "libcudart.so.13", "libcudart.so.12"]:
        try:
            cudart = ctypes.CDLL(name) if name else None
            if cudart:
                break
        except OSError:
            continue
    if not cublas or not cudart:
        print("gpu: skipped: libcublas or libcudart not found")
        return None
    n = 4096
    rng = np.random.default_rng(1)
    a = rng.standard_normal((1, n, n), dtype=np.float32)
    b = rng.standard_normal((1, n, n), dtype=np.float32)
    with tempfile.TemporaryDirectory() as work:
        paths = {}
        for name, array in {"A": a, "B": b, "C": np.zeros((1, n, n), dtype=np.float32)}.items():
            paths[name] = os.path.join(work, f"{name}.npy")
            np.save(paths[name], array)
        command = [tesserac, "run", os.path.join(stdlib, "gemm.tsr"), "--kernel", "gemm", "--device", "cuda:0",
                   "--grid", "cdiv(N, BN), cdiv(M, BM), BATCH", "--no-bounds-check", "--time", str(repeat), "--tune",
                   "--arg", f"A={paths['A']}", "--arg", f"B={paths['B']}", "--arg", f"C={paths['C']}",
                   "--arg", "alpha=1", "--arg", "beta=0", "--out", f"C={os.path.join(work, 'C.out.npy')}"]
        env = dict(os.environ, TESSERA_CACHE_DIR=os.path.join(work, "cache"), TESSERA_AUTOTUNE="1")
        done = subprocess.run(command, capture_output=True, text=True, check=True, env=env)
        text = done.stdout + done.stderr
        ours = float(re.search(r"median ([0-9.]+) ms over", text).group(1))
        choice = re.search(r"tuned 'gemm' for key .*?: (.*), median", text)
        ok = np.allclose(np.load(os.path.join(work, "C.out.npy"))[0], a[0] @ b[0], rtol=1e-2, atol=1e-1)
    # cuBLAS: column-major, so C^T = B^T A^T is C row-major.
    size = n * n * 4
    pa, pb, pc = ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_void_p()
    for p, host in ((pa, a), (pb, b), (pc, None)):
        cudart.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(size))
        if host is not None:
            cudart.cudaMemcpy(p, host.ctypes.data_as(ctypes.c_void_p), ctypes.c_size_t(size), 1)
    handle = ctypes.c_void_p()
    cublas.cublasCreate_v2(ctypes.byref(handle))
    one, zero = ctypes.c_float(1.0), ctypes.c_float(0.0)
    start, end = ctypes.c_void_p(), ctypes.c_void_p()
    cudart.cudaEventCreate(ctypes.byref(start))
    cudart.cudaEventCreate(ctypes.byref(end))
    times = []
    for i in range(repeat + 1):
        cudart.cudaEventRecord(start, None)
        cublas.cublasSgemm_v2(handle, 0, 0, n, n, n, ctypes.byref(one), pb, n, pa, n, ctypes.byref(zero), pc, n)
        cudart.cudaEventRecord(end, None)
        cudart.cudaEventSynchronize(end)
        ms = ctypes.c_float()
        cudart.cudaEventElapsedTime(ctypes.byref(ms), start, end)
        if i:
            times.append(ms.value)
    for p in (pa, pb, pc):
        cudart.cudaFree(p)
    cublas.cublasDestroy_v2(handle)
    theirs = sorted(times)[len(times) // 2]
    flops = 2.0 * n ** 3
    print(f"gpu: stdlib gemm f32 {n}^3 tuned ({choice.group(1) if choice else 'from the cache'}): {ours:.3f} ms "
          f"({flops / ours / 1e9:.1f} TFLOP/s); cuBLAS SGEMM: {theirs:.3f} ms ({flops / theirs / 1e9:.1f} TFLOP/s); "
          f"{theirs / ours:.2f}x of cuBLAS{'' if ok else '  WRONG RESULT'}")
    return ok


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tesserac", default=os.path.join(here, "..", "..", "build", "release", "tools", "tesserac"))
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--threads", help="TESSERA_CPU_THREADS")
    parser.add_argument("--only", choices=["kernels", "jit", "gpu"],
                        help="one group of cases: the autotuned kernels, the @jit functions, or the GPU case")
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
    for name, source, kernel, grid, inputs, outputs, scalars, check in cases if args.only in (None, "kernels") else []:
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
    # The @jit functions' generated kernels, tuned against their defaults.
    n = 1 << 22
    x = rng.standard_normal(n, dtype=np.float32)
    rows = rng.standard_normal((4096, 512), dtype=np.float32)
    e = np.exp(rows - rows.max(axis=1, keepdims=True))
    jit_cases = [(f"@jit x * 2 + 1, {n} f32", "chain", {"x": x}, x * np.float32(2) + np.float32(1), {}),
                 ("@jit softmax 4096 x 512", "soft", {"x": rows}, e / e.sum(axis=1, keepdims=True), {}),
                 ("@jit sum(axis=1) 4096 x 512", "row_sums", {"x": rows}, rows.sum(axis=1),
                  {"rtol": 1e-4, "atol": 1e-3})]
    qkv = [rng.standard_normal((8, 512, 64), dtype=np.float32) for _ in range(3)]
    jit_cases.append(("@jit flash attention causal 8x512x64", "attend", dict(zip("qkv", qkv)),
                      causal_attention(*qkv), {"rtol": 1e-4, "atol": 1e-5}))
    for name, function, inputs, expect, tolerance in jit_cases if args.only in (None, "jit") else []:
        with tempfile.TemporaryDirectory() as work:
            base, ok0, _ = run_jit(args.tesserac, work, function, inputs, expect, args.repeat, False, **tolerance)
            tuned, ok1, entries = run_jit(args.tesserac, work, function, inputs, expect, args.repeat, True, **tolerance)
            choices = "; ".join(f"{e['kernel']} {e['choice']}" for e in entries)
            print(f"{name:<28} {base:>9.3f} ms {'default':>9} {tuned:>9.3f} ms {base / tuned:>5.2f}x  chose {choices}"
                  f"{'' if ok0 and ok1 else '  WRONG RESULT'}")
            for entry in entries:
                times = ", ".join(f"{p} {ms:.3f}" for p, ms in sorted(entry["median_ms"].items(), key=lambda i: i[1]))
                print(f"    {entry['kernel']} tuning medians (ms): {times}")
            if not (ok0 and ok1):
                return 1
    if args.only in (None, "gpu") and gpu_gemm_against_cublas(args.tesserac, args.repeat) is False:
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
