"""The cases of the gemm_tc tests (gemm-tc*.py): stdlib/gemm.tsr's kernel
gemm_tc for T16 = f16 and bf16 at awkward shapes, against NumPy."""
from stdlib_check import *


def main():
    rng = np.random.default_rng(22)
    for dtype in ["f16", "bf16"]:
        h = Harness("gemm.tsr", aliases={"T16": dtype})
        cases = [(1, 1, 1, 1, 1.0, 0.0), (1, 70, 9, 1, 1.0, 0.0), (2, 77, 130, 50, 1.0, 0.0),
                 (1, 128, 64, 96, 1.0, 0.0), (1, 64, 128, 40, 2.0, 0.5)]
        for batch, m, n, k, alpha, beta in cases if dtype == "f16" else cases[2:]:
            a = random_narrow(rng, dtype, (batch, m, k))
            b = random_narrow(rng, dtype, (batch, k, n))
            c0 = rng.standard_normal((batch, m, n)).astype(np.float32) if beta else np.full((batch, m, n), np.nan, np.float32)
            inputs = {"A": a.astype(np.float16) if dtype == "f16" else a,
                      "B": b.astype(np.float16) if dtype == "f16" else b, "C": c0}
            out = h.run("gemm_tc", grid=((m + 63) // 64, (n + 63) // 64, batch), inputs=inputs, outputs=["C"],
                        alpha=alpha, beta=beta)
            a64, b64, c64 = a.astype(np.float64), b.astype(np.float64), c0.astype(np.float64)
            ref = alpha * a64 @ b64 + (beta * c64 if beta else 0.0)
            bound = abs(alpha) * np.abs(a64) @ np.abs(b64) + (abs(beta) * np.abs(c64) if beta else 0.0)
            print(f"{dtype}: batch {batch}, M N K = {m} {n} {k}, alpha {alpha}, beta {beta}")
            h.check("C", out["C"], ref, 2 * (k + 2) * EPS["f32"] * bound + 1e-30)
    h.done()
