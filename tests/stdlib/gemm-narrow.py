# REQUIRES: numpy
# RUN: %numpy-python %s --tesserac %tesserac --stdlib %S/../../stdlib --workdir %t | FileCheck %s
# stdlib/gemm.tsr, kernel gemm (SIMT), instantiated for narrow storage by
# rewriting its alias line `T = f32`: bf16, f16, fp8_e4m3 @accum(f32) and
# fp8_e5m2 @accum(f32), accumulation and output in f32. Inputs are values
# the storage type holds exactly, so the reference is float64 arithmetic on
# the same numbers. Products of two inputs are exact in f32 (at most 11 + 11
# significant bits), so the tolerance is the f32 summation bound
# 2 (K + 2) u |A| |B|, u = 2^-24. Also the other autotune corner (BM = BN =
# 64, BK = 16: 4 x 4 micro-tiles) in f32.
# CHECK-COUNT-8: C: ok
# CHECK: knobs BM=64 BN=64 BK=16
# CHECK-COUNT-2: C: ok
import sys, os
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "Inputs"))
from stdlib_check import *

rng = np.random.default_rng(21)


def case(h, dtype, batch, m, n, k, bm=128, bn=128):
    a = random_narrow(rng, dtype, (batch, m, k))
    b = random_narrow(rng, dtype, (batch, k, n))
    inputs = {"A": a.astype(np.float16) if dtype == "f16" else a,
              "B": b.astype(np.float16) if dtype == "f16" else b,
              "C": np.full((batch, m, n), np.nan, np.float32)}
    out = h.run("gemm", grid=((n + bn - 1) // bn, (m + bm - 1) // bm, batch), inputs=inputs, outputs=["C"],
                alpha=1.0, beta=0.0)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    print(f"{dtype}: batch {batch}, M N K = {m} {n} {k}")
    h.check("C", out["C"], a64 @ b64, 2 * (k + 2) * EPS["f32"] * (np.abs(a64) @ np.abs(b64)) + 1e-30)


for dtype, alias in [("bf16", "bf16"), ("f16", "f16"), ("fp8_e4m3", "fp8_e4m3 @accum(f32)"),
                     ("fp8_e5m2", "fp8_e5m2 @accum(f32)")]:
    h = Harness("gemm.tsr", aliases={"T": alias})
    case(h, dtype, 1, 1, 1, 1)
    case(h, dtype, 2, 131, 67, 45)

print("knobs BM=64 BN=64 BK=16")
h = Harness("gemm.tsr", replace=[("space=dict(BM=[64, 128], BN=[64, 128], BK=[16, 32])",
                                  "space=dict(BM=[64], BN=[64], BK=[16])")])
case(h, "f32", 1, 1, 1, 1, 64, 64)
case(h, "f32", 2, 65, 130, 17, 64, 64)
h.done()
