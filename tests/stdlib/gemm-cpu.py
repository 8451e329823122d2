# REQUIRES: numpy
# RUN: %numpy-python %s --tesserac %tesserac --stdlib %S/../../stdlib --workdir %t | FileCheck %s
# stdlib/gemm_cpu.tsr, kernel gemm_cpu (the CPU form of the SIMT GEMM), for
# f32, f16 and bf16 storage (its build-time instances), against NumPy in
# float64 and against the bits of gemm.tsr's `gemm` at its default point on
# the same inputs (both sum over k in order: the same bits). Shapes that are
# multiples of no tile size (edge lanes take the clamped path), K = 1, K
# over several blocks of BK, a batch of 3, alpha and beta (beta = 0 never
# reads C: it starts as NaN).
# CHECK-COUNT-18: C: ok
# CHECK-NOT: differ
# CHECK: same bits as gemm: 18 of 18
import sys, os
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "Inputs"))
from stdlib_check import *

rng = np.random.default_rng(22)
TILE = 128    # gemm_cpu's BM = BN, and gemm's at its default point
same = 0
cases = [(1, 1, 1, 1, 1.0, 0.0), (1, 5, 300, 1, 1.0, 0.0), (3, 130, 67, 33, 1.0, 0.0),
         (1, 257, 129, 70, 0.5, -2.0), (2, 64, 200, 129, 1.0, 1.0), (1, 256, 256, 200, 1.0, 0.0)]
for dtype in ["f32", "f16", "bf16"]:
    h = Harness("gemm_cpu.tsr", aliases={"T": dtype})
    reference = Harness("gemm.tsr", aliases={"T": dtype})
    for batch, m, n, k, alpha, beta in cases:
        if dtype == "f32":
            a = rng.standard_normal((batch, m, k)).astype(np.float32)
            b = rng.standard_normal((batch, k, n)).astype(np.float32)
        else:
            a = random_narrow(rng, dtype, (batch, m, k))
            b = random_narrow(rng, dtype, (batch, k, n))
        stored = (lambda x: x.astype(np.float16)) if dtype == "f16" else (lambda x: x)
        c0 = rng.standard_normal((batch, m, n)).astype(np.float32) if beta != 0.0 else np.full((batch, m, n), np.nan, np.float32)
        grid = ((n + TILE - 1) // TILE, (m + TILE - 1) // TILE, batch)
        inputs = {"A": stored(a), "B": stored(b), "C": c0}
        out = h.run("gemm_cpu", grid=grid, inputs=inputs, outputs=["C"], alpha=alpha, beta=beta)
        ref_out = reference.run("gemm", grid=grid, inputs=inputs, outputs=["C"], env={"TESSERA_AUTOTUNE": "0"},
                                alpha=alpha, beta=beta)
        a64, b64 = a.astype(np.float64), b.astype(np.float64)
        ref = alpha * a64 @ b64 + (beta * c0.astype(np.float64) if beta != 0.0 else 0.0)
        bound = abs(alpha) * np.abs(a64) @ np.abs(b64) + (abs(beta) * np.abs(c0.astype(np.float64)) if beta != 0.0 else 0.0)
        print(f"{dtype}: batch {batch}, M N K = {m} {n} {k}, alpha {alpha}, beta {beta}")
        h.check("C", out["C"], ref, 2 * (k + 2) * EPS["f32"] * bound + 1e-30)
        same += int(np.array_equal(out["C"].view(np.uint32), ref_out["C"].view(np.uint32)))
print(f"same bits as gemm: {same} of {3 * len(cases)}")
h.done()
