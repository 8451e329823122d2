# REQUIRES: numpy
# RUN: %numpy-python %s --tesserac %tesserac --stdlib %S/../../stdlib --workdir %t | FileCheck %s
# stdlib/reduce.tsr: sum, max, min, prod and mean over rows (reduce_rows)
# and over a whole 1-D tensor in two stages (reduce_partials then
# reduce_finish), against NumPy in float64, for T = f32, bf16 and
# fp8_e4m3 @accum(f32) (the alias line rewritten; the narrow forms on fewer
# shapes). Rows: 1 x 1, C smaller than the group (5), larger and not a
# multiple (300, 1000). 1-D: n = 5, 1000 and 100003 on 7 and 16 groups
# (more groups than elements too).
# Determinism: the 1-D reductions run again on 1 CPU thread instead of 2
# and must give the same bits.
# Tolerances (u32 = 2^-24): sum 2 (C + 40) u32 sum|x|, mean the same / C,
# prod 2 (C + 40) u32 |prod| (inputs near 1), max and min exact.
# CHECK-COUNT-32: ok
# CHECK: deterministic: 15 runs
import sys, os
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "Inputs"))
from stdlib_check import *

rng = np.random.default_rng(25)
u32 = EPS["f32"]
OPS = ["sum", "max", "min", "prod", "mean"]


def reference(op, x64, axis):
    count = x64.shape[axis]
    if op == "sum":
        return x64.sum(axis), 2 * (count + 40) * u32 * np.abs(x64).sum(axis)
    if op == "mean":
        return x64.mean(axis), 2 * (count + 40) * u32 * np.abs(x64).sum(axis) / count
    if op == "prod":
        p = x64.prod(axis)
        return p, 2 * (count + 40) * u32 * np.abs(p)
    ref = x64.max(axis) if op == "max" else x64.min(axis)
    return ref, np.zeros_like(ref)


def values(dtype, shape, op):
    if op == "prod":   # near 1, so that the product neither overflows nor underflows
        spread = min(0.05, 0.5 / np.sqrt(shape[-1]))
        return quantize(dtype, 1.0 + spread * rng.standard_normal(shape).astype(np.float32))
    return random_narrow(rng, dtype, shape, 4.0)


deterministic = 0
for dtype, alias in [("f32", "f32"), ("bf16", "bf16"), ("fp8_e4m3", "fp8_e4m3 @accum(f32)")]:
    h = Harness("reduce.tsr", aliases={"T": alias})
    for r, c in [(1, 1), (3, 5), (2, 1000)] if dtype == "f32" else [(4, 300)]:
        for code, op in enumerate(OPS):
            if dtype != "f32" and op not in ("sum", "max", "mean"):
                continue
            x = values(dtype, (r, c), op)
            out = h.run("reduce_rows", grid=r, inputs={"x": x, "out": np.zeros(r, np.float32)}, outputs=["out"], op=code)
            ref, tol = reference(op, x.astype(np.float64), 1)
            print(f"reduce_rows {dtype} {op} {r} x {c}")
            h.check("out", out["out"], ref, tol)
    for n, groups in [(100003, 16), (5, 7)] if dtype == "f32" else [(1000, 7)]:
        for code, op in enumerate(OPS):
            if (n == 5 or dtype != "f32") and op not in ("sum", "max"):
                continue
            x = values(dtype, (n,), op)
            runs = []
            for threads in (["2", "1"] if n == 100003 and dtype == "f32" else ["2"]):
                env = {"TESSERA_CPU_THREADS": threads}
                stage1 = h.run("reduce_partials", grid=groups, inputs={"x": x, "partials": np.zeros(groups, np.float32)},
                               outputs=["partials"], env=env, op=code)
                stage2 = h.run("reduce_finish", grid=1, inputs={"partials": stage1["partials"],
                                                                "out": np.zeros(1, np.float32)},
                               outputs=["out"], env=env, op=code, n=n)
                runs.append(stage2["out"])
            if len(runs) == 2:
                if runs[0].tobytes() != runs[1].tobytes():
                    print(f"reduce {op}: 2 threads gave {runs[0]!r}, 1 thread {runs[1]!r}")
                    h.failed = True
                deterministic += 3
            ref, tol = reference(op, x.astype(np.float64)[None, :], 1)
            print(f"reduce {dtype} {op} n = {n} on {groups} groups")
            h.check("out", runs[0], ref, tol)
print(f"deterministic: {deterministic} runs")
h.done()
