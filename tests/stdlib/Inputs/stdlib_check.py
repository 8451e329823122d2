"""Harness of the stdlib tests (tests/stdlib/*.py): runs a kernel of
stdlib/*.tsr with `tesserac run` on NumPy inputs and compares its outputs
with NumPy references.

A test is a Python script run by lit:

    # REQUIRES: numpy
    # RUN: %numpy-python %s --tesserac %tesserac --stdlib %S/../../stdlib --workdir %t
    from stdlib_check import *
    h = Harness("gemm.tsr", aliases={"T": "bf16"})
    out = h.run("gemm", grid=(1, 1, 1), inputs={"A": a, ...}, outputs=["C"], alpha=1.0)
    h.check("C", out["C"], reference, tol)
    h.done()

`aliases` rewrites module-level lines `NAME = ...` of the kernel file (its
dtype aliases and constants) before compiling, which is how one kernel is
instantiated per dtype; `replace` is a list of (old, new) strings, each
occurring once (another autotune choice); the rewritten file is written
into the work directory (lit's %t). Inputs are written there as .npy files: f32, f16, i32
as themselves; bf16 and fp8 tensors as float32 files whose values the
kernel's dtype represents exactly (`tesserac run` encodes them; see
quantize_bf16 and narrow_values), their outputs come back decoded to
float32. TESSERA_EXEC_DEVICE picks the device (default cpu) and
TESSERA_EXEC_MMA the tensor-core path (`tesserac run --mma`), as for the
execution tests.

check() compares element by element: |got - ref| <= tol, tol a scalar or an
array (NaN matches NaN). It prints `NAME: ok (...)` or the worst mismatches;
done() exits 1 if any check failed.
"""
import argparse
import os
import re
import subprocess
import sys

import numpy as np

__all__ = ["Harness", "quantize", "quantize_bf16", "narrow_values", "random_narrow", "attention_reference", "EPS", "np"]

# Unit roundoff of each storage type (half an ulp of 1).
EPS = {"f32": 2.0 ** -24, "f16": 2.0 ** -11, "bf16": 2.0 ** -8, "fp8_e4m3": 2.0 ** -4, "fp8_e5m2": 2.0 ** -3}


def quantize_bf16(x):
    """x (float32) rounded to the nearest bf16, ties to even (finite x)."""
    bits = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return bits.astype(np.uint32).view(np.float32)


def narrow_values(dtype):
    """Every finite value of an fp8 format, decoded from its 256 codes
    (OCP 8-bit formats: e4m3 has no infinities and NaN at S.1111.111; e5m2
    is IEEE-like)."""
    exponent_bits, mantissa_bits, bias = {"fp8_e4m3": (4, 3, 7), "fp8_e5m2": (5, 2, 15)}[dtype]
    values = []
    for code in range(256):
        sign = -1.0 if code >> 7 else 1.0
        e = (code >> mantissa_bits) & ((1 << exponent_bits) - 1)
        m = code & ((1 << mantissa_bits) - 1)
        if dtype == "fp8_e5m2" and e == 31:
            continue  # inf, NaN
        if dtype == "fp8_e4m3" and e == 15 and m == 7:
            continue  # NaN
        if e == 0:
            values.append(sign * m * 2.0 ** (1 - bias - mantissa_bits))
        else:
            values.append(sign * (1 + m / 2.0 ** mantissa_bits) * 2.0 ** (e - bias))
    return np.unique(np.array(values, dtype=np.float32))


def quantize(dtype, x):
    """x (float32) rounded to the nearest value of dtype (to nearest even for
    f16 and bf16; to the nearest table value for fp8, ties to the smaller
    magnitude, which random inputs almost never meet)."""
    x = np.asarray(x, dtype=np.float32)
    if dtype == "f32":
        return x
    if dtype == "f16":
        return x.astype(np.float16).astype(np.float32)
    if dtype == "bf16":
        return quantize_bf16(x)
    values = narrow_values(dtype)
    index = np.clip(np.searchsorted(values, x), 1, len(values) - 1)
    below, above = values[index - 1], values[index]
    return np.where(np.abs(x - below) <= np.abs(above - x), below, above).astype(np.float32)


def random_narrow(rng, dtype, shape, scale=1.0):
    """Random values of `dtype` (float32 arrays holding exactly
    representable values), roughly normal with the given scale."""
    return quantize(dtype, (rng.standard_normal(shape) * scale).astype(np.float32))


def attention_reference(q64, k64, scale, causal):
    """Attention's probabilities in float64 with the whole S x S matrix:
    (s, valid, p, lse) for q [BH, SQ, D], k [BH, SK, D]; `valid` masks keys
    j <= i when causal (top-left aligned), s is -inf where it is False."""
    sq, sk = q64.shape[1], k64.shape[1]
    s = scale * q64 @ k64.transpose(0, 2, 1)
    valid = np.ones((sq, sk), bool)
    if causal:
        valid = np.arange(sk)[None, :] <= np.arange(sq)[:, None]
    s = np.where(valid, s, -np.inf)
    m = s.max(axis=2, keepdims=True)
    e = np.exp(s - m)
    total = e.sum(axis=2, keepdims=True)
    return s, valid, e / total, (m + np.log(total))[:, :, 0]


class Harness:
    def __init__(self, kernel_file, aliases=None, replace=()):
        parser = argparse.ArgumentParser()
        parser.add_argument("--tesserac", required=True)
        parser.add_argument("--stdlib", required=True, help="the stdlib/ folder")
        parser.add_argument("--workdir", required=True, help="a scratch folder (lit's %%t)")
        self.args = parser.parse_args()
        os.makedirs(self.args.workdir, exist_ok=True)
        self.device = os.environ.get("TESSERA_EXEC_DEVICE", "cpu")
        self.mma = os.environ.get("TESSERA_EXEC_MMA")
        self.failed = False
        self.runs = 0
        with open(os.path.join(self.args.stdlib, kernel_file)) as f:
            source = f.read()
        for old, new in replace:
            if source.count(old) != 1:
                raise SystemExit(f"stdlib_check: {old!r} does not occur exactly once in {kernel_file}")
            source = source.replace(old, new)
        self.source = self.instantiate(source, aliases or {})
        tag = "_".join(f"{k}-{v}" for k, v in sorted((aliases or {}).items()))
        tag += "_" + "_".join(new for _, new in replace) if replace else ""
        tag = re.sub(r"[^A-Za-z0-9_.-]", "", tag)
        stem = os.path.splitext(kernel_file)[0]
        self.path = os.path.join(self.args.workdir, f"{stem}{'_' + tag if tag else ''}.tsr")
        with open(self.path, "w") as f:
            f.write(self.source)

    @staticmethod
    def instantiate(source, aliases):
        """Rewrites the module-level lines `NAME = value` (keeping comments)."""
        for name, value in aliases.items():
            pattern = re.compile(rf"^{re.escape(name)} = [^#\n]*?(\s*#.*)?$", re.M)
            source, count = pattern.subn(lambda m: f"{name} = {value}" + (m.group(1) or ""), source)
            if count != 1:
                raise SystemExit(f"stdlib_check: no single module-level line '{name} = ...' to rewrite")
        return source

    def run(self, kernel, grid, inputs, outputs, env=None, **scalars):
        """Runs `kernel` on `grid` (an int or a tuple) with the tensors of
        `inputs` (name -> NumPy array; mut tensors included) and the scalars;
        returns the tensors named in `outputs` as arrays. `env`: more
        environment variables (TESSERA_CPU_THREADS, say)."""
        self.runs += 1
        grid = grid if isinstance(grid, (tuple, list)) else (grid,)
        command = [self.args.tesserac, "run", self.path, "--kernel", kernel,
                   "--grid", ",".join(str(g) for g in grid), "--device", self.device, "-q"]
        if self.mma:
            command += ["--mma", self.mma]
        for name, array in inputs.items():
            path = os.path.join(self.args.workdir, f"{kernel}.{self.runs}.{name}.npy")
            np.save(path, np.ascontiguousarray(array))
            command += ["--arg", f"{name}={path}"]
        for name, value in scalars.items():
            text = ("true" if value else "false") if isinstance(value, bool) else repr(value)
            command += ["--arg", f"{name}={text}"]
        results = {}
        for name in outputs:
            path = os.path.join(self.args.workdir, f"{kernel}.{self.runs}.{name}.out.npy")
            command += ["--out", f"{name}={path}"]
            results[name] = path
        done = subprocess.run(command, capture_output=True, text=True, env={**os.environ, **(env or {})})
        if done.returncode != 0:
            print(f"{kernel}: tesserac run failed ({done.returncode}):\n{done.stdout}{done.stderr}")
            print("command:", " ".join(command))
            sys.exit(1)
        return {name: np.load(path) for name, path in results.items()}

    def check(self, name, got, ref, tol):
        """|got - ref| <= tol element by element (equal values, infinities
        included, and NaN with NaN match whatever the tolerance)."""
        got = np.asarray(got, dtype=np.float64)
        ref = np.asarray(ref, dtype=np.float64)
        if got.shape != ref.shape:
            print(f"{name}: shape {got.shape}, expected {ref.shape}")
            self.failed = True
            return
        tol = np.broadcast_to(np.asarray(tol, dtype=np.float64), ref.shape)
        same = (got == ref) | (np.isnan(got) & np.isnan(ref))   # infinities included
        with np.errstate(invalid="ignore"):
            error = np.where(same, 0.0, np.abs(got - ref))
        bad = ~(same | (error <= tol))
        if bad.any():
            self.failed = True
            where = np.argwhere(bad)
            print(f"{name}: {bad.sum()} of {bad.size} elements differ")
            for index in where[:8]:
                i = tuple(index)
                print(f"  at {i}: got {got[i]!r}, expected {ref[i]!r} (tolerance {tol[i]:.3g})")
        else:
            finite = np.isfinite(error) & ~same
            worst = float(error[finite].max()) if finite.any() else 0.0
            ratio = float((error[finite] / np.maximum(tol[finite], 1e-300)).max()) if finite.any() else 0.0
            print(f"{name}: ok (max error {worst:.3g}, {ratio:.2f} of the tolerance)")

    def done(self):
        sys.exit(1 if self.failed else 0)
