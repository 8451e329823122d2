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
f32 1024^3 at least 0.5x OpenBLAS. Forward against forward+backward (issue
21): a two-layer MLP's loss against its value_and_grad, causal attention
against the gradients of a loss of it (flash kernels both ways); each line
also gives the backward's share, (forward+backward - forward) / forward,
goal at most 2.5. Their NumPy references (the same math, written by hand)
check the results and are timed too. Prints one line per case, then the
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


def tesserac_times(tesserac, work, function, inputs, repeat, results=1, device="cpu"):
    """`tesserac run --func function --time repeat` on `device`: ((min ms,
    median ms), the results as NumPy arrays). Also used by gpu.py."""
    names = ["result"] if results == 1 else [f"result.{i}" for i in range(results)]
    command = [tesserac, "run", source, "--func", function, "--device", device, "--no-bounds-check", "-q", "--time", str(repeat)]
    for name in names:
        command += ["--out", f"{name}=" + os.path.join(work, f"{name}.npy")]
    for name, array in inputs.items():
        path = os.path.join(work, f"{name}.npy")
        np.save(path, array)
        command += ["--arg", f"{name}={path}"]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"bench/jit: {function}: tesserac run failed:\n{done.stderr}")
    times = re.search(r"min ([0-9.]+) ms, median ([0-9.]+) ms", done.stdout + done.stderr)
    got = [np.load(os.path.join(work, f"{name}.npy")) for name in names]
    return (float(times.group(1)), float(times.group(2))), got


def tesserac_median(tesserac, work, function, inputs, repeat, results=1):
    (_, median), got = tesserac_times(tesserac, work, function, inputs, repeat, results)
    return median, got[0] if results == 1 else got


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def layer_norm(x, gamma, beta):
    mu = x.mean(axis=-1, keepdims=True)
    d = x - mu
    return d / np.sqrt((d * d).mean(axis=-1, keepdims=True) + 1e-5) * gamma + beta


def chain(x, y):
    return np.maximum(x * 1.5 + y, 0) * (1 / (1 + np.exp(-y))) - 0.25 * x


def mlp_loss(x, w1, b1, w2, b2, y):
    h = np.maximum(x @ w1 + b1, 0)
    return np.mean((h @ w2 + b2 - y) ** 2)


def mlp_value_and_grad(x, w1, b1, w2, b2, y):
    z = x @ w1 + b1
    h = np.maximum(z, 0)
    e = h @ w2 + b2 - y
    g = 2 * e / e.size
    gh = (g @ w2.T) * (z > 0)
    return [np.mean(e * e), x.T @ gh, gh.sum(axis=0), h.T @ g, g.sum(axis=0)]


def causal_probabilities(q, k):
    s = q @ k.transpose(0, 2, 1) / np.sqrt(q.shape[-1])
    s = np.where(np.triu(np.ones(s.shape[-2:], bool), 1), -np.inf, s)
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def attention_grad(q, k, v, w):
    p = causal_probabilities(q, k)
    scale = 1 / np.sqrt(q.shape[-1])
    ds = p * (w @ v.transpose(0, 2, 1) - (w * (p @ v)).sum(axis=-1, keepdims=True))
    return [scale * ds @ k, scale * ds.transpose(0, 2, 1) @ q, p.transpose(0, 2, 1) @ w]


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
    mlp = {"x": rng.standard_normal((256, 512), dtype=np.float32),
           "w1": (rng.standard_normal((512, 1024)) / np.sqrt(512)).astype(np.float32),
           "b1": rng.standard_normal(1024, dtype=np.float32) * np.float32(0.1),
           "w2": (rng.standard_normal((1024, 256)) / np.sqrt(1024)).astype(np.float32),
           "b2": rng.standard_normal(256, dtype=np.float32) * np.float32(0.1),
           "y": rng.standard_normal((256, 256), dtype=np.float32)}
    att = {n: rng.standard_normal((8, 512, 64), dtype=np.float32) for n in ("q", "k", "v", "w")}
    qkv = {n: att[n] for n in ("q", "k", "v")}
    # (title, forward function, its inputs, reference, backward function, its
    # inputs, results, reference, tolerance)
    pairs = [
        ("MLP 256x512x1024x256", "mlp_loss", mlp, lambda: mlp_loss(**mlp),
         "mlp_value_and_grad", mlp, 5, lambda: mlp_value_and_grad(**mlp), 1e-4),
        ("attention 8x512x64 causal", "attention_forward", qkv, lambda: causal_probabilities(att["q"], att["k"]) @ att["v"],
         "attention_grad", att, 3, lambda: attention_grad(**att), 1e-4),
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
        for title, forward, forward_inputs, forward_ref, backward, inputs, results, backward_ref, tolerance in pairs:
            if args.only and forward not in args.only and backward not in args.only:
                continue
            times = []
            for function, arguments, count, reference in ((forward, forward_inputs, 1, forward_ref),
                                                          (backward, inputs, results, backward_ref)):
                ms, got = tesserac_median(tesserac, work, function, arguments, args.repeat, count)
                want = reference()
                for g, w in zip(got if count > 1 else [got], want if count > 1 else [want]):
                    w = np.asarray(w, dtype=np.float64)
                    error = float(np.abs(np.asarray(g, dtype=np.float64) - w).max()) / max(1.0, float(np.abs(w).max()))
                    if np.shape(g) != w.shape or error > tolerance:
                        sys.exit(f"bench/jit: {function}: wrong result (shape {np.shape(g)} vs {w.shape}, error {error:.2e})")
                times.append((ms, numpy_median(reference, args.repeat)))
            (fwd, fwd_np), (both, both_np) = times
            print(f"  {title:26s} forward {fwd:9.3f} ms (numpy {fwd_np:8.3f})   forward+backward {both:9.3f} ms "
                  f"(numpy {both_np:8.3f})   backward {(both - fwd) / fwd:4.2f}x the forward")
    load = os.getloadavg()
    print(f"  machine: {platform.machine()} {os.cpu_count()} hardware threads, {platform.node()}; "
          f"{datetime.datetime.now().strftime('%Y-%m-%d %H:%M')}; load average {load[0]:.2f}")


if __name__ == "__main__":
    main()
