#!/usr/bin/env python3
"""Execution tests of the graph level: run @jit functions and programs with
`tesserac run` on the CPU target and compare their results with NumPy.

A test file holds its cases in comment lines starting with `# NP:`: Python
with NumPy (`np`) and these helpers in scope:

  rnd(*shape, dtype="f32", lo=-2, hi=2)   deterministic random values of the
        dtype (integers in [lo, hi]; floats uniform, already on the dtype's grid:
        bf16/fp8 as float32 arrays whose values the narrow type holds exactly)
  q(dtype, a)   a rounded to dtype, to nearest even (bf16, fp8_e4m3, fp8_e5m2,
        f16 as float32 values; f32, f64; ints and bool by astype)
  save(**arrays)   writes NAME.npy into the work directory (a program's
        ts.load reads it: the .tsr is compiled and run in that directory)
  program(defines={}, stdout=None, fails=None)   `tesserac run FILE [-D K=V]`:
        the program; `stdout` is the exact text it must print; `fails` a text
        its error message must contain (exit 1)
  expect(path, reference, dtype, rtol=None, atol=None)   the .npy a program
        wrote against the reference
  workdir   the work directory (with `os`, to read what a program wrote)
  random_bits(seed, counters)   Philox-4x32-10 words as ts.rand/randn/dropout
        use them (docs/numerics.md, "The random bits")
  qp(dtype, a, rounding="rne", saturate=False, seed=None)   a rounded to dtype
        by a numeric policy, element by element with the exact encoder of
        tests/conformance/exec/Inputs/exec_check.py (every narrow format, f16;
        rounding "rne", "rna", "rz", "ru", "rd"; with `seed`, stochastic
        rounding with the random bits of each element's row-major index), as
        float32 values; dtype "f32" with saturate clamps infinities
  func(name, args, expect, dtype, rtol=None, atol=None, defines={}, fails=None)
        `tesserac run FILE --func NAME --arg P=P.npy ... --out result=...`: args
        a dict of arrays in parameter order (a Python int or float is passed
        as `--arg P=VALUE`, for a scalar parameter); expect one reference, or a tuple
        of them for a tuple result (dtype a tuple too)

Programs and functions run at `tesserac run -O0` unless --opt-level says
otherwise (the optimised CPU code of a fused softmax takes LLVM about a second
to compile); the cheap files have a second RUN line at -O3.

Comparison: the shape exactly; the .npy dtype (bf16/fp8 results come back as
float32 values); integers and bools exactly; floats within atol + rtol *
|reference| with NaN matching NaN and infinities exactly (with rtol = atol =
0, the sign of a zero too). Default
tolerances per dtype are TOLERANCE below (one rounding of the result type
plus the accumulated error of a short f32 computation), stated in the
directory's README. Prints "<what>: match" per check, or the first
mismatches, and exits 1 on any failure.
"""
import argparse
import os
import subprocess
import sys

import numpy as np

sys.dont_write_bytecode = True  # tests write only into their %t
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "exec", "Inputs"))
import exec_check  # noqa: E402  (the exact encoder of the narrow formats)

# (rtol, atol) per result dtype.
TOLERANCE = {
    "f64": (1e-12, 1e-12),
    "f32": (2e-5, 1e-6),
    "f16": (2e-3, 1e-4),
    "bf16": (1.6e-2, 1e-3),
    "fp8_e4m3": (0.13, 2.0 ** -9),
    "fp8_e5m2": (0.26, 2.0 ** -16),
}

NUMPY_DTYPE = {
    "f64": np.float64, "f32": np.float32, "f16": np.float16, "bf16": np.float32, "fp8_e4m3": np.float32,
    "fp8_e5m2": np.float32, "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64, "u8": np.uint8,
    "u16": np.uint16, "u32": np.uint32, "u64": np.uint64, "bool": np.bool_,
}

# Narrow float formats: exponent bits, mantissa bits, bias, largest finite value.
NARROW = {"bf16": (8, 7, 127, 3.3895313892515355e38), "fp8_e4m3": (4, 3, 7, 448.0), "fp8_e5m2": (5, 2, 15, 57344.0)}


def q(dtype, a):
    """a rounded to dtype (nearest, ties to even), as the array --out gives."""
    a = np.asarray(a)
    if dtype in ("f16",):
        return a.astype(np.float32).astype(np.float16).astype(np.float32)
    if dtype == "bf16":
        bits = a.astype(np.float32).view(np.uint32).astype(np.uint64)
        u = np.uint64
        rounded = ((bits + u(0x7FFF) + ((bits >> u(16)) & u(1))) >> u(16)) << u(16)
        out = rounded.astype(np.uint32).view(np.float32)
        return np.where(np.isnan(a), np.float32(np.nan), out).astype(np.float32)
    if dtype in NARROW:
        e, m, bias, largest = NARROW[dtype]
        x = a.astype(np.float64)
        mag = np.abs(x)
        exponent = np.floor(np.log2(np.where(mag > 0, mag, 1.0)))
        exponent = np.maximum(exponent, 1 - bias)
        quantum = 2.0 ** (exponent - m)
        r = np.round(mag / quantum) * quantum  # np.round: ties to even
        if dtype == "fp8_e4m3":
            r = np.where(r > largest, np.nan, r)
        else:
            r = np.where(r > largest, np.inf, r)
        return np.copysign(r, x).astype(np.float32)
    return a.astype(NUMPY_DTYPE[dtype])


def qp(dtype, a, rounding="rne", saturate=False, seed=None):
    """a (float32 values) rounded to dtype by a policy, as float32 values."""
    a = np.asarray(a, dtype=np.float32)
    flat = a.reshape(-1)
    if dtype == "f32":
        limit = np.float32(np.finfo(np.float32).max)
        return np.where(np.isinf(a) & saturate, np.copysign(limit, a), a).astype(np.float32)
    out = []
    for i, x in enumerate(flat.tolist()):
        random = exec_check.random_bits(seed, i) if seed is not None else 0
        out.append(exec_check.quantize_with(dtype, x, "stochastic" if seed is not None else rounding, saturate, random))
    return np.array(out, dtype=np.float32).reshape(a.shape)


def random_bits(seed, counters):
    """Philox-4x32-10 words (docs/numerics.md, "The random bits"): word
    counter % 4 of the block counter // 4 under key seed, for an array of
    counters, as uint32."""
    mask = np.uint64(0xFFFFFFFF)
    counters = np.asarray(counters, dtype=np.uint64)
    block = counters >> np.uint64(2)
    c0, c1 = block & mask, block >> np.uint64(32)
    c2 = c3 = np.zeros_like(block)
    k0, k1 = np.uint64(seed & 0xFFFFFFFF), np.uint64((seed >> 32) & 0xFFFFFFFF)
    for round_ in range(10):
        if round_ > 0:
            k0, k1 = (k0 + np.uint64(0x9E3779B9)) & mask, (k1 + np.uint64(0xBB67AE85)) & mask
        p0 = np.uint64(0xD2511F53) * c0
        p1 = np.uint64(0xCD9E8D57) * c2
        c0, c1, c2, c3 = ((p1 >> np.uint64(32)) ^ c1 ^ k0) & mask, p1 & mask, ((p0 >> np.uint64(32)) ^ c3 ^ k1) & mask, p0 & mask
    words = np.stack([c0, c1, c2, c3])
    return np.choose((counters & np.uint64(3)).astype(np.int64), words).astype(np.uint32)


def _check_random_bits():
    """The vectorised generator against the execution tests' scalar one (which
    checks itself against Random123's known answer)."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "exec", "Inputs"))
    import exec_check
    counters = [0, 1, 2, 3, 4, 7, 12345, 2 ** 33 + 5]
    for seed in (0, 7, 2 ** 40 + 3):
        assert list(random_bits(seed, counters)) == [exec_check.random_bits(seed, c) for c in counters]


class Checker:
    def __init__(self, tesserac, source, workdir, opt_level, run_args=()):
        self.tesserac, self.source, self.workdir = tesserac, os.path.abspath(source), workdir
        self.opt_level = opt_level
        self.run_args = list(run_args)
        # scripts/gpu-check.sh runs these tests on a GPU (TESSERA_EXEC_DEVICE=cuda:0,
        # as the execution tests); without it tesserac run picks its default.
        if os.environ.get("TESSERA_EXEC_DEVICE"):
            self.run_args += ["--device", os.environ["TESSERA_EXEC_DEVICE"]]
        self.failed = False
        self.random = np.random.default_rng(20261126)
        self.calls = 0

    def report(self, what, problems):
        if problems:
            print(f"{what}: MISMATCH\n  " + "\n  ".join(problems))
            self.failed = True
        else:
            print(f"{what}: match")

    def rnd(self, *shape, dtype="f32", lo=-2, hi=2):
        if dtype == "bool":
            return self.random.integers(0, 2, size=shape).astype(np.bool_)
        if dtype[0] in "iu":
            return self.random.integers(lo, hi + 1, size=shape).astype(NUMPY_DTYPE[dtype])
        values = self.random.uniform(lo, hi, size=shape)
        return q(dtype, values).astype(NUMPY_DTYPE[dtype]) if dtype not in ("f64",) else values

    def save(self, **arrays):
        for name, array in arrays.items():
            np.save(os.path.join(self.workdir, name + ".npy"), np.asarray(array))

    def compare(self, what, actual, expected, dtype, rtol, atol):
        expected = np.asarray(expected)
        problems = []
        if actual.shape != expected.shape:
            return [f"shape {actual.shape}, expected {expected.shape}"]
        want = np.dtype(NUMPY_DTYPE[dtype])
        if actual.dtype != want:
            problems.append(f"dtype {actual.dtype}, expected {want} (for {dtype})")
            return problems
        if want.kind in "biu":
            bad = np.argwhere(actual != expected.astype(want))
            for index in bad[:5]:
                i = tuple(index)
                problems.append(f"{list(i)} = {actual[i]!r}, expected {expected.astype(want)[i]!r}")
            if len(bad):
                problems.insert(0, f"{len(bad)} of {actual.size} elements differ")
            return problems
        default_rtol, default_atol = TOLERANCE[dtype]
        rtol = default_rtol if rtol is None else rtol
        atol = default_atol if atol is None else atol
        a = actual.astype(np.float64)
        e = expected.astype(np.float64)
        with np.errstate(invalid="ignore"):
            ok = (a == e) | (np.isnan(a) & np.isnan(e)) | (np.abs(a - e) <= atol + rtol * np.abs(e))
            if rtol == 0 and atol == 0:  # exact: the sign of a zero counts too
                ok &= (np.signbit(a) == np.signbit(e)) | np.isnan(e)
        bad = np.argwhere(~ok)
        if len(bad):
            problems.append(f"{len(bad)} of {actual.size} elements differ (rtol {rtol}, atol {atol})")
            for index in bad[:5]:
                i = tuple(index)
                problems.append(f"{list(i)} = {a[i]!r}, expected {e[i]!r}")
        return problems

    def tesserac_run(self, arguments, defines, fails, what):
        command = [self.tesserac, "run", f"-O{self.opt_level}", *self.run_args, self.source]
        command += [f"-D{k}={v}" for k, v in (defines or {}).items()] + arguments
        result = subprocess.run(command, cwd=self.workdir, capture_output=True, text=True)
        if fails is not None:
            if result.returncode != 1 or fails not in result.stderr:
                print(f"{what}: expected exit 1 with '{fails}', got exit {result.returncode}:\n{result.stderr}")
                self.failed = True
            else:
                print(f"{what}: fails as expected")
            return None
        if result.returncode != 0:
            print(f"{what}: tesserac run failed with exit code {result.returncode}:\n{result.stderr}{result.stdout}")
            self.failed = True
            return None
        return result

    def program(self, defines=None, stdout=None, fails=None):
        result = self.tesserac_run([], defines, fails, "program")
        if result is not None and stdout is not None:
            self.report("program stdout", [] if result.stdout == stdout else
                        [f"printed:\n{result.stdout}\nexpected:\n{stdout}"])
        return result.stdout if result is not None else None

    def expect(self, path, reference, dtype, rtol=None, atol=None):
        full = os.path.join(self.workdir, path)
        if not os.path.exists(full):
            self.report(path, ["the program did not write it"])
            return
        self.report(path, self.compare(path, np.load(full), reference, dtype, rtol, atol))

    def func(self, name, args, expect=None, dtype="f32", rtol=None, atol=None, defines=None, fails=None):
        self.calls += 1
        arguments = ["--func", name]
        for parameter, value in args.items():
            if isinstance(value, (int, float)):  # a scalar parameter: --arg P=VALUE
                arguments += ["--arg", f"{parameter}={value}"]
                continue
            path = f"{name}.{self.calls}.{parameter}.npy"
            np.save(os.path.join(self.workdir, path), np.asarray(value))
            arguments += ["--arg", f"{parameter}={path}"]
        results = expect if isinstance(expect, tuple) else (expect,)
        dtypes = dtype if isinstance(dtype, tuple) else (dtype,) * len(results)
        names = ["result"] if not isinstance(expect, tuple) else [f"result.{i}" for i in range(len(results))]
        outs = {n: f"{name}.{self.calls}.{n}.npy" for n in names}
        if fails is None:
            for n, path in outs.items():
                arguments += ["--out", f"{n}={path}"]
        result = self.tesserac_run(arguments, defines, fails, name)
        if result is None:
            return
        problems = []
        for (n, path), reference, dt in zip(outs.items(), results, dtypes):
            full = os.path.join(self.workdir, path)
            if not os.path.exists(full):
                problems.append(f"{n}: not written")
                continue
            problems += [f"{n}: {p}" for p in self.compare(n, np.load(full), reference, dt, rtol, atol)]
        self.report(name, problems)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tesserac", required=True)
    parser.add_argument("--workdir", required=True, help="created if missing; the test's %%t")
    parser.add_argument("--opt-level", type=int, default=0,
                        help="tesserac run -O (default 0: LLVM's -O3 takes seconds on the CPU lanes of a softmax)")
    parser.add_argument("--program", help="the .tsr to compile and run, when not the test file itself (an example "
                                           "tested by a file of `# NP:` cases)")
    parser.add_argument("--run-arg", dest="run_args", action="append", default=[],
                        help="an option for every tesserac run (repeatable): --run-arg=--no-cpu-forms")
    parser.add_argument("source")
    options = parser.parse_args()
    lines = []
    with open(options.source) as f:
        for line in f.read().splitlines():
            if line.startswith("# NP:"):
                body = line[len("# NP:"):]
                lines.append(body[1:] if body.startswith(" ") else body)
    os.makedirs(options.workdir, exist_ok=True)
    _check_random_bits()
    checker = Checker(options.tesserac, options.program or options.source, options.workdir, options.opt_level,
                      options.run_args)
    namespace = {"np": np, "q": q, "rnd": checker.rnd, "save": checker.save, "program": checker.program,
                 "expect": checker.expect, "func": checker.func, "random_bits": random_bits, "qp": qp,
                 "os": os, "workdir": options.workdir}
    exec(compile("\n".join(lines), options.source + " (# NP: lines)", "exec"), namespace)
    return 1 if checker.failed else 0


if __name__ == "__main__":
    sys.exit(main())
