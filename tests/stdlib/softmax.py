# REQUIRES: numpy
# RUN: %numpy-python %s --tesserac %tesserac --stdlib %S/../../stdlib --workdir %t | FileCheck %s
# stdlib/softmax.tsr: softmax and log_softmax over the last axis, one group
# of LANES = 128 lanes per row, against NumPy in float64, for T = f32, bf16
# and f16 (the alias line rewritten) and with LANES = 32 (one warp). Shapes:
# 1 x 1, C smaller than the group (5), larger and not a multiple (300,
# 1000), rows of large values (1000 + x: stability) and rows with -inf
# (masked) entries.
# Tolerances, u the unit roundoff of T (2^-24 f32, 2^-8 bf16, 2^-11 f16):
#   softmax:     |y - ref| <= 1.01 u |ref| + 2 u32 (C + 16 + |x - max|) |ref| (+ 2^-25 for f16's subnormals)
#   log_softmax: |y - ref| <= 1.01 u |ref| + 4 u32 (|x| + |max| + |log sum| + C)
# CHECK-COUNT-20: y: ok
import sys, os
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "Inputs"))
from stdlib_check import *

rng = np.random.default_rng(23)
u32 = EPS["f32"]


def rows(dtype, r, c, offset=0.0, masked=False):
    x = quantize(dtype, random_narrow(rng, dtype, (r, c), scale=3.0) + np.float32(offset))
    if masked:
        x[:, ::3] = -np.inf
        x[:, 1] = 0.5   # each row keeps a finite entry
    return x


def check(h, dtype, x):
    r, c = x.shape
    arg = x.astype(np.float16) if dtype == "f16" else x
    x64 = x.astype(np.float64)
    m = x64.max(axis=1, keepdims=True)
    e = np.exp(x64 - m)
    s = e.sum(axis=1, keepdims=True)
    ref = e / s
    log_ref = x64 - m - np.log(s)
    u = EPS[dtype]
    tiny = 2.0 ** -25 if dtype == "f16" else 0.0
    finite = np.isfinite(x64)
    spread = np.where(finite, np.abs(x64 - m), 0.0)
    out = h.run("softmax", grid=r, inputs={"x": arg, "y": np.zeros_like(arg)}, outputs=["y"])
    print(f"softmax {dtype} {r} x {c}")
    h.check("y", out["y"], ref, 1.01 * u * np.abs(ref) + 2 * u32 * (c + 16 + spread) * np.abs(ref) + tiny)
    out = h.run("log_softmax", grid=r, inputs={"x": arg, "y": np.zeros_like(arg)}, outputs=["y"])
    print(f"log_softmax {dtype} {r} x {c}")
    log_tol = 1.01 * u * np.abs(log_ref) + 4 * u32 * (np.abs(x64) + np.abs(m) + np.abs(np.log(s)) + c)
    h.check("y", out["y"], log_ref, np.where(finite, log_tol, 0.0))


for dtype in ["f32", "bf16", "f16"]:
    h = Harness("softmax.tsr", aliases={"T": dtype})
    check(h, dtype, rows(dtype, 1, 1))
    check(h, dtype, rows(dtype, 3, 5))
    check(h, dtype, np.concatenate([rows(dtype, 4, 300), rows(dtype, 2, 300, 1000.0 if dtype != "f16" else 100.0),
                                    rows(dtype, 2, 300, masked=True)]))
h = Harness("softmax.tsr", aliases={"LANES": "32"})
check(h, "f32", np.concatenate([rows("f32", 3, 1000), rows("f32", 1, 1000, masked=True)]))
h.done()
