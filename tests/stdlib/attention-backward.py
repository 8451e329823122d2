# REQUIRES: numpy
# RUN: %numpy-python %s --tesserac %tesserac --stdlib %S/../../stdlib --workdir %t | FileCheck %s
# stdlib/attention.tsr's backward: flash_attention_bwd_prep (delta, zeroed
# dq partial sums), flash_attention_bwd (dk, dv, dq's partial sums, from the
# forward's lse) and flash_attention_bwd_dq (dq), against NumPy in float64
# with the whole S x S matrix, for T = f32, bf16, f16 and HEAD_DIM = 64 and
# 128. Shapes as the forward's test: SQ = SK = 1, one partial block (37,
# causal and not), SQ != SK (5 queries and 70 keys, 70 queries and 5 keys),
# several query and key blocks (SQ = SK = 100, causal), BH = 1 to 3; SPLIT
# (groups per head, each with its own dq partial sum) 1, 2, 3 and 4 (more
# groups than key blocks: one group has none). dq_acc starts as NaN, so a
# partial sum prep did not zero shows.
# Tolerances: each gradient is a sum of products of f32 values whose
# magnitudes are bounded by the same sums of absolute values (|p|, |dp|,
# |delta|, |q|, |k|); rounding errors of n-term sums grow like sqrt(n) for
# random inputs, so (u32 = 2^-24, u = T's unit roundoff for the stored
# gradient, n = SQ + SK + D):
#   tol = 1.01 u |ref| + 64 sqrt(n) u32 (the same product with absolute values)
# CHECK-COUNT-52: ok
# CHECK-NOT: ok
import sys, os
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "Inputs"))
from stdlib_check import *

rng = np.random.default_rng(27)
u32 = EPS["f32"]
LANES = 128


def case(h, dtype, bh, sq, sk, d, causal, split=1):
    row_lanes = d // 16
    bq, kr = LANES // row_lanes, LANES // row_lanes   # bq: prep's and dq's default ROWS (lit runs TESSERA_AUTOTUNE=0)
    q = random_narrow(rng, dtype, (bh, sq, d))
    k = random_narrow(rng, dtype, (bh, sk, d))
    v = random_narrow(rng, dtype, (bh, sk, d))
    do = random_narrow(rng, dtype, (bh, sq, d))
    scale = float(np.float32(1.0 / np.sqrt(d)))
    q64, k64, v64, do64 = (a.astype(np.float64) for a in (q, k, v, do))
    s, valid, p, lse = attention_reference(q64, k64, scale, causal)
    o64 = p @ v64
    o = quantize(dtype, o64.astype(np.float32))   # the forward's output as T stores it
    delta = (do64 * o.astype(np.float64)).sum(axis=2)
    dp = do64 @ v64.transpose(0, 2, 1)
    ds = p * (dp - delta[:, :, None])
    dq = scale * ds @ k64
    dk = scale * ds.transpose(0, 2, 1) @ q64
    dv = p.transpose(0, 2, 1) @ do64
    # Bounds of the same sums with absolute values.
    adp = np.abs(do64) @ np.abs(v64).transpose(0, 2, 1)
    ads = p * (adp + np.abs(delta)[:, :, None])
    n = sq + sk + d
    slack = 64 * np.sqrt(n) * u32
    arg = (lambda a: a.astype(np.float16)) if dtype == "f16" else (lambda a: a)
    # The forward's lse (as flash_attention stores it: f32).
    lse32 = lse.astype(np.float32)
    dq_acc = np.full((split, bh, sq, d), np.nan, np.float32)   # prep must zero it
    prep = h.run("flash_attention_bwd_prep", grid=((sq + bq - 1) // bq, bh), outputs=["delta", "dq_acc"],
                 inputs={"o": arg(o), "do": arg(do), "delta": np.zeros((bh, sq), np.float32), "dq_acc": dq_acc})
    out = h.run("flash_attention_bwd", grid=(split, bh), outputs=["dk", "dv", "dq_acc"],
                inputs={"q": arg(q), "k": arg(k), "v": arg(v), "do": arg(do), "lse": lse32,
                        "delta": prep["delta"], "dk": arg(np.zeros_like(k)), "dv": arg(np.zeros_like(v)),
                        "dq_acc": prep["dq_acc"]}, scale=scale, causal=causal)
    out.update(h.run("flash_attention_bwd_dq", grid=((sq + bq - 1) // bq, bh), outputs=["dq"],
                     inputs={"dq_acc": out["dq_acc"], "dq": arg(np.zeros_like(q))}))
    out["delta"] = prep["delta"]
    print(f"attention backward {dtype} D {d}: BH {bh}, SQ {sq}, SK {sk}{', causal' if causal else ''}, SPLIT {split}")
    h.check("delta", out["delta"], delta, slack * (np.abs(do64) * np.abs(o)).sum(axis=2))
    h.check("dq", out["dq"], dq, 1.01 * EPS[dtype] * np.abs(dq) + slack * scale * (ads @ np.abs(k64)))
    h.check("dk", out["dk"], dk, 1.01 * EPS[dtype] * np.abs(dk) + slack * scale * (ads.transpose(0, 2, 1) @ np.abs(q64)))
    h.check("dv", out["dv"], dv, 1.01 * EPS[dtype] * np.abs(dv) + slack * (p.transpose(0, 2, 1) @ np.abs(do64)))


h = Harness("attention.tsr")
case(h, "f32", 2, 1, 1, 64, False)
case(h, "f32", 2, 37, 37, 64, False)
case(h, "f32", 2, 37, 37, 64, True)
case(h, "f32", 3, 5, 70, 64, False)
case(h, "f32", 1, 70, 5, 64, True)
case(h, "f32", 1, 100, 100, 64, True)
case(h, "f32", 1, 100, 100, 64, True, split=3)
case(h, "f32", 3, 5, 70, 64, False, split=2)
h = Harness("attention.tsr", aliases={"HEAD_DIM": "128"})
case(h, "f32", 2, 37, 37, 128, True)
case(h, "f32", 1, 20, 45, 128, False)
case(h, "f32", 1, 20, 45, 128, False, split=4)
for dtype in ["bf16", "f16"]:
    h = Harness("attention.tsr", aliases={"T": dtype})
    case(h, dtype, 2, 37, 37, 64, True)
h.done()
