#!/usr/bin/env python3
"""bench/jit/gpu.py: the @jit functions of jit.tsr on a CUDA device against
the same computation in PyTorch on the same GPU (the best reference there:
cuBLAS behind its matmul, its fused softmax, layer norm and scaled dot
product attention).

usage: python3 bench/jit/gpu.py [--tesserac PATH] [--device cuda:0] [--repeat N]

Each function runs with `tesserac run --func F --device cuda:0 --time N`
(whole calls: host code, the generated and stdlib kernels, the result's
allocation; the first, checked call tunes when TESSERA_AUTOTUNE is not 0)
and PyTorch is timed the same way: N calls after one warm-up, each followed
by torch.cuda.synchronize(). f32 throughout, TF32 off. Results are compared
with PyTorch's first. Prints one line per case (the best and median of
each, PyTorch's best over tesserac's), or one line saying why it skipped
(no PyTorch, no CUDA device). Not run by ctest; the figures of the first
run are in docs/stdlib.md ("Speed on a GPU").
"""
import argparse
import datetime
import os
import sys
import tempfile
import time

import numpy as np

from run import tesserac_times  # bench/jit/run.py, beside this file

here = os.path.dirname(os.path.abspath(__file__))
source = os.path.join(here, "jit.tsr")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tesserac", default=os.path.join(here, "..", "..", "build", "release", "tools", "tesserac"))
    parser.add_argument("--device", default="cuda:0")
    parser.add_argument("--repeat", type=int, default=30)
    args = parser.parse_args()
    try:
        import torch
    except ImportError:
        print("bench/jit/gpu.py: skipped: no PyTorch (the reference)")
        return 0
    if not torch.cuda.is_available():
        print("bench/jit/gpu.py: skipped: PyTorch sees no CUDA device")
        return 0
    device = torch.device(args.device)
    torch.backends.cuda.matmul.allow_tf32 = False
    rng = np.random.default_rng(0)

    def ours(function, inputs, results):
        with tempfile.TemporaryDirectory() as work:
            return tesserac_times(args.tesserac, work, function, inputs, args.repeat, results, args.device)

    def theirs(function, tensors):
        function(*tensors)
        torch.cuda.synchronize()
        times = []
        for _ in range(args.repeat):
            start = time.perf_counter()
            function(*tensors)
            torch.cuda.synchronize()
            times.append((time.perf_counter() - start) * 1e3)
        times.sort()
        return times[0], times[len(times) // 2]

    def case(label, function, inputs, reference, results=1, rtol=1e-3, atol=1e-3):
        tensors = [torch.from_numpy(a).to(device) for a in inputs.values()]
        expected = reference(*tensors)
        expected = [expected] if results == 1 else list(expected)
        (mine, got), torch_times = ours(function, inputs, results), theirs(reference, tensors)
        ok = all(np.allclose(g, e.detach().cpu().numpy(), rtol=rtol, atol=atol) for g, e in zip(got, expected))
        print(f"{label:40s} tesserac {mine[0]:8.3f} ({mine[1]:8.3f}) ms   PyTorch {torch_times[0]:8.3f} "
              f"({torch_times[1]:8.3f}) ms   PyTorch/tesserac {torch_times[0] / mine[0]:5.2f}x"
              f"{'' if ok else '   WRONG RESULT'}")
        return ok

    ok = True
    rows = cols = 4096
    x = rng.standard_normal((rows, cols), dtype=np.float32)
    with torch.no_grad():
        ok &= case("softmax 4096x4096", "softmax_rows", {"x": x}, lambda x: torch.softmax(x, -1))
        gamma = rng.standard_normal(cols, dtype=np.float32)
        beta = rng.standard_normal(cols, dtype=np.float32)
        ok &= case("layer norm 4096x4096", "layer_norm_rows", {"x": x, "gamma": gamma, "beta": beta},
                   lambda x, g, b: torch.nn.functional.layer_norm(x, (cols,), g, b, 1e-5), atol=1e-2)
        n = 1 << 24
        a = rng.standard_normal(n, dtype=np.float32)
        b = rng.standard_normal(n, dtype=np.float32)
        ok &= case("elementwise chain 2^24", "elementwise_chain", {"x": a, "y": b},
                   lambda x, y: torch.relu(x * 1.5 + y) * torch.sigmoid(y) - 0.25 * x)
        m = 4096
        p = rng.standard_normal((m, m), dtype=np.float32)
        q = rng.standard_normal((m, m), dtype=np.float32)
        ok &= case("GEMM f32 4096^3 (cuBLAS)", "gemm", {"a": p, "b": q}, lambda a, b: a @ b, rtol=1e-2, atol=1e-1)
        s = 2048
        qkvw = [rng.standard_normal((8, s, 64), dtype=np.float32) for _ in range(4)]
        ok &= case("flash attention causal 8x2048x64", "attention_forward",
                   dict(zip("qkv", qkvw[:3])),
                   lambda q, k, v: torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True), atol=1e-2)

    def attention_grad(q, k, v, w):
        q, k, v = (t.detach().requires_grad_() for t in (q, k, v))
        out = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        return torch.autograd.grad((out * w).sum(), (q, k, v))

    ok &= case("its gradient (q, k, v)", "attention_grad", dict(zip("qkvw", qkvw)), attention_grad, results=3,
               rtol=1e-2, atol=5e-2)
    print(f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, {torch.cuda.get_device_name(device)}, "
          f"PyTorch {torch.__version__}, {args.repeat} calls each")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
