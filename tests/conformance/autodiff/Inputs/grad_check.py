#!/usr/bin/env python3
"""Gradient checks: run a @jit function that returns gradients with
`tesserac run --func` and compare them with central finite differences in
f64 of a NumPy reference of the differentiated function (and, where given,
with analytic gradients).

The test file holds its cases in comment lines starting with `# PY:`, Python
that calls

    check(func, args, ref, wrt, value=False, analytic=None, rtol=2e-3, atol=2e-4)

`args` maps each parameter of `func` to a NumPy array (cast to f32 unless
it is f16, for an f16 parameter; bf16 parameters take f32 values bf16
holds exactly) or a
Python bool or int (passed as a run-time scalar, given to `ref` as is) or float
(a run-time `f32` number, given to `ref` as a 0-d f64 array), `ref`
is the differentiated function written with NumPy (called with f64 copies of
the arguments, returning a number), `wrt` names the arguments whose
gradients `func` returns, in order (after the value when `value`). `analytic`,
when given, returns the expected gradients (a list) from the f64 arguments;
`fd=False` compares with those alone (a custom rule that is not the exact
derivative of its forward function). `--source` runs another .tsr file (an
example) than the test file.
`agree` lists pairs of output names that must match each other (an
identity such as <jvp(t), c> == <t, vjp(c)>).
Forward mode: `jvp_fd(ref, primals, tangents)` is the directional derivative
of `ref` (NumPy, any result) at the f64 `primals` along `tangents` by central
differences (analytic=... with fd=False, the outputs named freely).
`rng` is a seeded numpy.random.Generator. Prints "<func>: <names> match" per
case, or the mismatches and exits 1.
"""
import argparse
import os
import subprocess
import sys

import numpy as np


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tesserac", required=True)
    parser.add_argument("--workdir", required=True)
    parser.add_argument("--source", help="the .tsr file to run (default: the test file)")
    parser.add_argument("test")
    options = parser.parse_args()
    os.makedirs(options.workdir, exist_ok=True)
    code = "\n".join(line.split("# PY:", 1)[1][1:].rstrip() for line in open(options.test) if "# PY:" in line)
    failures = []

    def check(func, args, ref, wrt, value=False, analytic=None, rtol=2e-3, atol=2e-4, fd=True, agree=()):
        command = [options.tesserac, "run", options.source or options.test, "--func", func]
        for name, array in args.items():
            if isinstance(array, bool):  # a bool parameter (an `if` condition)
                command += ["--arg", f"{name}={'true' if array else 'false'}"]
                continue
            if isinstance(array, int):  # an integer parameter (a run-time offset)
                command += ["--arg", f"{name}={array}"]
                continue
            if isinstance(array, float):  # a float number parameter (`t: f32`), rounded to f32
                command += ["--arg", f"{name}={float(np.float32(array))!r}"]
                continue
            path = os.path.join(options.workdir, f"{func}.{name}.npy")
            is_f16 = isinstance(array, np.ndarray) and array.dtype == np.float16  # an f16 parameter's file
            np.save(path, array if is_f16 else np.asarray(array, dtype=np.float32))
            command += ["--arg", f"{name}={path}"]
        outputs = (["value"] if value else []) + list(wrt)
        paths = []
        for i, name in enumerate(outputs):
            path = os.path.join(options.workdir, f"{func}.out.{i}.npy")
            paths.append(path)
            command += ["--out", f"{'result' if len(outputs) == 1 else 'result.' + str(i)}={path}"]
        run = subprocess.run(command, capture_output=True, text=True)
        if run.returncode != 0:
            failures.append(f"{func}: tesserac run failed ({run.returncode}): {run.stderr.strip()}")
            print(failures[-1])
            return
        got = [np.load(p).astype(np.float64) for p in paths]
        wide = {name: a if isinstance(a, (bool, int)) else np.asarray(a, dtype=np.float32).astype(np.float64)
                for name, a in args.items()}
        names = list(wide)
        expected = []
        if value:
            expected.append(("value", np.asarray(ref(*[wide[n] for n in names]), dtype=np.float64)))
        for name in wrt if fd else []:
            numeric = np.zeros_like(wide[name])
            flat = numeric.reshape(-1)
            for i in range(flat.size):
                h = 1e-6 * max(1.0, abs(wide[name].reshape(-1)[i]))
                plus = {n: a if isinstance(a, (bool, int)) else a.copy() for n, a in wide.items()}
                minus = {n: a if isinstance(a, (bool, int)) else a.copy() for n, a in wide.items()}
                plus[name].reshape(-1)[i] += h
                minus[name].reshape(-1)[i] -= h
                flat[i] = (ref(*[plus[n] for n in names]) - ref(*[minus[n] for n in names])) / (2 * h)
            expected.append((name, numeric))
        bad = []
        for (name, want), have in zip(expected, got if fd else got[:1]):
            if have.shape != want.shape:
                bad.append(f"{name}: shape {have.shape}, expected {want.shape}")
            elif not np.allclose(have, want, rtol=rtol, atol=atol):
                err = np.max(np.abs(have - want))
                bad.append(f"{name}: max error {err:.3g} against finite differences")
        if analytic is not None:
            for name, want, have in zip(wrt, analytic(*[wide[n] for n in names]), got[1 if value else 0:]):
                if not np.allclose(have, want, rtol=rtol, atol=atol):
                    bad.append(f"{name}: max error {np.max(np.abs(have - want)):.3g} against the analytic gradient")
        for first, second in agree:
            a, b = got[outputs.index(first)], got[outputs.index(second)]
            if not np.allclose(a, b, rtol=rtol, atol=atol):
                bad.append(f"{first} and {second} differ by {np.max(np.abs(a - b)):.3g}")
        if bad:
            failures.append(f"{func}: " + "; ".join(bad))
            print(failures[-1])
        else:
            print(f"{func}: {' '.join(outputs)} match" + (" (analytic too)" if analytic is not None else ""))

    def jvp_fd(ref, primals, tangents, h=1e-6):
        plus = [np.asarray(p, dtype=np.float64) + h * np.asarray(t, dtype=np.float64) for p, t in zip(primals, tangents)]
        minus = [np.asarray(p, dtype=np.float64) - h * np.asarray(t, dtype=np.float64) for p, t in zip(primals, tangents)]
        return (np.asarray(ref(*plus)) - np.asarray(ref(*minus))) / (2 * h)

    rng = np.random.default_rng(0)
    exec(code, {"np": np, "check": check, "rng": rng, "jvp_fd": jvp_fd})
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
