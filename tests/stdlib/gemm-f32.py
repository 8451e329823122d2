# REQUIRES: numpy
# RUN: %numpy-python %s --tesserac %tesserac --stdlib %S/../../stdlib --workdir %t | FileCheck %s
# stdlib/gemm.tsr, kernel gemm (SIMT), f32 storage and accumulation, against
# NumPy in float64, at shapes that are multiples of no tile size: 1 x 1 x 1,
# K = 1, partial tiles on every side, a batch of 3, alpha and beta (beta = 0
# never reads C: it starts as NaN).
# Tolerance: |C - ref| <= 2 K u (|alpha| |A| |B| + |beta| |C0|) + tiny, u =
# 2^-24 (f32 accumulation, the classical bound for a sum of K products).
# CHECK-COUNT-5: C: ok
import sys, os
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "Inputs"))
from stdlib_check import *

h = Harness("gemm.tsr")
BM, BN = 128, 128
rng = np.random.default_rng(20)
for batch, m, n, k, alpha, beta in [(1, 1, 1, 1, 1.0, 0.0), (1, 5, 300, 1, 1.0, 0.0), (3, 130, 67, 33, 1.0, 0.0),
                                    (1, 257, 129, 70, 0.5, -2.0), (2, 64, 200, 129, 1.0, 1.0)]:
    a = rng.standard_normal((batch, m, k)).astype(np.float32)
    b = rng.standard_normal((batch, k, n)).astype(np.float32)
    c0 = rng.standard_normal((batch, m, n)).astype(np.float32) if beta != 0.0 else np.full((batch, m, n), np.nan, np.float32)
    out = h.run("gemm", grid=((n + BN - 1) // BN, (m + BM - 1) // BM, batch), inputs={"A": a, "B": b, "C": c0},
                outputs=["C"], alpha=alpha, beta=beta)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    ref = alpha * a64 @ b64 + (beta * c0.astype(np.float64) if beta != 0.0 else 0.0)
    bound = abs(alpha) * np.abs(a64) @ np.abs(b64) + (abs(beta) * np.abs(c0.astype(np.float64)) if beta != 0.0 else 0.0)
    print(f"batch {batch}, M N K = {m} {n} {k}, alpha {alpha}, beta {beta}")
    h.check("C", out["C"], ref, 2 * (k + 2) * EPS["f32"] * bound + 1e-30)
h.done()
