# REQUIRES: numpy
# RUN: %numpy-python %s --tesserac %tesserac --stdlib %S/../../stdlib --workdir %t | FileCheck %s
# stdlib/norm.tsr: layer_norm (with and without weight and bias: empty
# tensors) and rms_norm, one group per row, against NumPy in float64, for
# T = f32, bf16 and f16 (the alias line rewritten). Shapes: 1 x 1 (variance
# 0: rstd = 1/sqrt(eps)), C smaller than the group (5), larger and not a
# multiple (300), rows whose mean is large against their spread (100 + x:
# the two-pass variance), eps = 1e-5.
# Tolerances (u32 = 2^-24; u = T's unit roundoff for the stored y):
#   mean: 2 (C + 2) u32 mean|x|;  rstd: 4 (C + 8) u32 rstd
#   y:    1.01 u |ref| + 4 u32 rstd |w| ((C + 8) |x - mean| + |x| + |mean|) + 4 u32 |b|
# CHECK-COUNT-48: ok
import sys, os
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "Inputs"))
from stdlib_check import *

rng = np.random.default_rng(24)
u32 = EPS["f32"]
eps = 1e-5


def as_arg(dtype, a):
    return a.astype(np.float16) if dtype == "f16" else a


def check_layer_norm(h, dtype, x, affine):
    r, c = x.shape
    w = random_narrow(rng, dtype, (c,)) if affine else np.zeros((0,), np.float32)
    b = random_narrow(rng, dtype, (c,)) if affine else np.zeros((0,), np.float32)
    out = h.run("layer_norm", grid=r, outputs=["y", "mean", "rstd"],
                inputs={"x": as_arg(dtype, x), "weight": as_arg(dtype, w), "bias": as_arg(dtype, b),
                        "y": as_arg(dtype, np.zeros_like(x)), "mean": np.zeros(r, np.float32),
                        "rstd": np.zeros(r, np.float32)}, eps=eps)
    x64 = x.astype(np.float64)
    mean = x64.mean(axis=1, keepdims=True)
    rstd = 1.0 / np.sqrt(((x64 - mean) ** 2).mean(axis=1, keepdims=True) + eps)
    w64 = w.astype(np.float64) if affine else 1.0
    b64 = b.astype(np.float64) if affine else 0.0
    ref = (x64 - mean) * rstd * w64 + b64
    print(f"layer_norm {dtype} {r} x {c}{' affine' if affine else ''}")
    h.check("mean", out["mean"], mean[:, 0], 2 * (c + 2) * u32 * np.abs(x64).mean(axis=1))
    h.check("rstd", out["rstd"], rstd[:, 0], 4 * (c + 8) * u32 * rstd[:, 0])
    tol = 1.01 * EPS[dtype] * np.abs(ref) + 4 * u32 * rstd * np.abs(w64) * (
        (c + 8) * np.abs(x64 - mean) + np.abs(x64) + np.abs(mean)) + 4 * u32 * np.abs(b64)
    h.check("y", out["y"], ref, tol)


def check_rms_norm(h, dtype, x, affine):
    r, c = x.shape
    w = random_narrow(rng, dtype, (c,)) if affine else np.zeros((0,), np.float32)
    out = h.run("rms_norm", grid=r, outputs=["y", "rstd"],
                inputs={"x": as_arg(dtype, x), "weight": as_arg(dtype, w), "y": as_arg(dtype, np.zeros_like(x)),
                        "rstd": np.zeros(r, np.float32)}, eps=eps)
    x64 = x.astype(np.float64)
    rstd = 1.0 / np.sqrt((x64 ** 2).mean(axis=1, keepdims=True) + eps)
    w64 = w.astype(np.float64) if affine else 1.0
    ref = x64 * rstd * w64
    print(f"rms_norm {dtype} {r} x {c}{' affine' if affine else ''}")
    h.check("rstd", out["rstd"], rstd[:, 0], 4 * (c + 8) * u32 * rstd[:, 0])
    h.check("y", out["y"], ref, 1.01 * EPS[dtype] * np.abs(ref) + 4 * (c + 8) * u32 * rstd * np.abs(w64) * np.abs(x64))


for dtype in ["f32", "bf16", "f16"]:
    h = Harness("norm.tsr", aliases={"T": dtype})
    one = random_narrow(rng, dtype, (1, 1))
    small = random_narrow(rng, dtype, (3, 5), 2.0)
    wide = np.concatenate([random_narrow(rng, dtype, (3, 300)),
                           quantize(dtype, random_narrow(rng, dtype, (2, 300)) + np.float32(100.0))])
    check_layer_norm(h, dtype, one, False)
    check_layer_norm(h, dtype, small, True)
    check_layer_norm(h, dtype, wide, True)
    check_layer_norm(h, dtype, wide, False)
    check_rms_norm(h, dtype, small, True)
    check_rms_norm(h, dtype, wide, False)
h.done()
