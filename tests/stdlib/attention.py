# REQUIRES: numpy
# RUN: %numpy-python %s --tesserac %tesserac --stdlib %S/../../stdlib --workdir %t | FileCheck %s
# stdlib/attention.tsr: flash-attention forward (online softmax over key
# blocks), o and lse against NumPy in float64 with the whole S x S matrix,
# for T = f32, bf16 and f16 (the alias line rewritten) and HEAD_DIM = 64 and
# 128 (the knob line rewritten), scale = 1/sqrt(D). Shapes: SQ = SK = 1,
# one partial block (37, causal and not), SQ != SK (5 queries, 70 keys),
# several query groups and key blocks (SQ = SK = 100, causal), BH = 2 or 3.
# Tolerances (u32 = 2^-24, u = T's unit roundoff for the stored o): f32
# rounding errors of sums of n terms grow like sqrt(n) for these random
# inputs (the worst-case bounds, linear in n, are 100 times looser than the
# errors seen), so with a safety factor of 4:
#   es_i = 4 sqrt(D) u32 scale max_j (|q_i| . |k_j|)     (score error)
#   o:   1.01 u |ref| + (2 es_i + 16 sqrt(SK + 16) u32) (P |V|)_ic
#   lse: es_i + 8 sqrt(SK + 16) u32 (1 + |lse|)
# CHECK-COUNT-22: ok
import sys, os
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "Inputs"))
from stdlib_check import *

rng = np.random.default_rng(26)
u32 = EPS["f32"]


def case(h, dtype, bh, sq, sk, d, causal, bq):
    q = random_narrow(rng, dtype, (bh, sq, d))
    k = random_narrow(rng, dtype, (bh, sk, d))
    v = random_narrow(rng, dtype, (bh, sk, d))
    scale = float(np.float32(1.0 / np.sqrt(d)))
    arg = (lambda a: a.astype(np.float16)) if dtype == "f16" else (lambda a: a)
    out = h.run("flash_attention", grid=((sq + bq - 1) // bq, bh), outputs=["o", "lse"],
                inputs={"q": arg(q), "k": arg(k), "v": arg(v), "o": arg(np.zeros_like(q)),
                        "lse": np.zeros((bh, sq), np.float32)}, scale=scale, causal=causal)
    q64, k64, v64 = q.astype(np.float64), k.astype(np.float64), v.astype(np.float64)
    s, valid, p, lse = attention_reference(q64, k64, scale, causal)
    ref = p @ v64
    es = 4 * np.sqrt(d) * u32 * scale * np.where(valid, np.abs(q64) @ np.abs(k64).transpose(0, 2, 1), 0).max(axis=2)
    print(f"flash_attention {dtype} D {d}: BH {bh}, SQ {sq}, SK {sk}{', causal' if causal else ''}")
    h.check("o", out["o"], ref, 1.01 * EPS[dtype] * np.abs(ref) + (2 * es[:, :, None] + 16 * np.sqrt(sk + 16) * u32) * (p @ np.abs(v64)))
    h.check("lse", out["lse"], lse, es + 8 * np.sqrt(sk + 16) * u32 * (1 + np.abs(lse)))


h = Harness("attention.tsr")
case(h, "f32", 2, 1, 1, 64, False, 32)
case(h, "f32", 2, 37, 37, 64, False, 32)
case(h, "f32", 2, 37, 37, 64, True, 32)
case(h, "f32", 3, 5, 70, 64, False, 32)
case(h, "f32", 1, 100, 100, 64, True, 32)
h = Harness("attention.tsr", aliases={"HEAD_DIM": "128"})
case(h, "f32", 2, 37, 37, 128, True, 16)
case(h, "f32", 1, 20, 45, 128, False, 16)
for dtype in ["bf16", "f16"]:
    h = Harness("attention.tsr", aliases={"T": dtype})
    case(h, dtype, 2, 37, 37, 64, True, 32)
    case(h, dtype, 2, 5, 70, 64, False, 32)
h.done()
