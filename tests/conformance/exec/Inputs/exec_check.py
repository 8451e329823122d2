#!/usr/bin/env python3
"""Execution tests: run a .tsr kernel with `tesserac run` and compare the
results with a reference computed here, in plain Python.

The test file holds its cases in comment lines starting with `# PY:`; they are
Python that calls run(kernel, grid=..., <parameter>=<value>..., expect={...}).
A tensor argument is Tensor(dtype, shape, values) (values row-major), a scalar
is (dtype, value). `expect` maps each mut tensor to its expected values (a
flat list), compared exactly for integers and within `rtol`/`atol` for floats.
Prints one line per case ("<kernel>: <names> match") or the first mismatches
and exits 1. TESSERA_EXEC_DEVICE picks the device (default: cpu), TESSERA_EXEC_REPEAT
repeats every case (the barrier stress test runs 100 times).

No NumPy needed: .npy files are written and read with `struct`.
"""
import argparse
import ast
import math
import os
import struct
import subprocess
import sys
import tempfile

FORMATS = {
    "bool": ("|b1", "?"), "i8": ("|i1", "b"), "i16": ("<i2", "h"), "i32": ("<i4", "i"), "i64": ("<i8", "q"),
    "u8": ("|u1", "B"), "u16": ("<u2", "H"), "u32": ("<u4", "I"), "u64": ("<u8", "Q"),
    "f16": ("<f2", "e"), "f32": ("<f4", "f"), "f64": ("<f8", "d"),
}


class Tensor:
    def __init__(self, dtype, shape, values):
        count = 1
        for d in shape:
            count *= d
        values = list(values)
        if len(values) != count:
            raise ValueError(f"Tensor({dtype}, {shape}): {len(values)} values for {count} elements")
        self.dtype, self.shape, self.values = dtype, list(shape), values


def write_npy(path, tensor):
    descr, code = FORMATS[tensor.dtype]
    shape = "(" + "".join(f"{d}," if len(tensor.shape) == 1 else f"{d}, " for d in tensor.shape).rstrip(", ")
    shape += ",)" if len(tensor.shape) == 1 else ")"
    header = f"{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}"
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode("latin1"))
        f.write(struct.pack("<" + code * len(tensor.values), *tensor.values))


def read_npy(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:6] != b"\x93NUMPY":
        raise ValueError(f"{path}: not a .npy file")
    length = struct.unpack("<H", data[8:10])[0]
    header = ast.literal_eval(data[10:10 + length].decode("latin1"))
    code = next(c for d, c in FORMATS.values() if d == header["descr"])
    count = 1
    for d in header["shape"]:
        count *= d
    return list(struct.unpack("<" + code * count, data[10 + length:]))


def f32(x):
    """Rounds a Python float to the nearest f32, as the kernel stores it."""
    return struct.unpack("<f", struct.pack("<f", x))[0]


class Checker:
    def __init__(self, tesserac, source, device, workdir):
        self.tesserac, self.source, self.device, self.workdir = tesserac, source, device, workdir
        self.failed = False
        self.count = 0

    def run(self, kernel, grid, expect, rtol=1e-5, atol=1e-6, group=None, **arguments):
        self.count += 1
        command = [self.tesserac, "run", self.source, "--kernel", kernel, "--grid", str(grid), "--quiet"]
        if self.device:
            command += ["--device", self.device]
        if group is not None:
            command += ["--group", str(group)]
        for name, value in arguments.items():
            if isinstance(value, Tensor):
                path = os.path.join(self.workdir, f"case{self.count}_{name}.npy")
                write_npy(path, value)
                command += ["--arg", f"{name}={path}"]
            else:
                dtype, scalar = value
                text = ("true" if scalar else "false") if dtype == "bool" else repr(scalar)
                command += ["--arg", f"{name}={text}"]
        outputs = {}
        for name in expect:
            outputs[name] = os.path.join(self.workdir, f"case{self.count}_{name}.out.npy")
            command += ["--out", f"{name}={outputs[name]}"]
        result = subprocess.run(command, capture_output=True, text=True)
        if result.returncode != 0:
            print(f"{kernel}: tesserac run failed with exit code {result.returncode}:\n{result.stderr}")
            self.failed = True
            return
        mismatches = []
        for name, expected in expect.items():
            actual = read_npy(outputs[name])
            if len(actual) != len(expected):
                mismatches.append(f"{name}: {len(actual)} elements, expected {len(expected)}")
                continue
            bad = []
            for i, (a, e) in enumerate(zip(actual, expected)):
                if isinstance(e, float) or isinstance(a, float):
                    ok = (math.isnan(a) and math.isnan(e)) or abs(a - e) <= atol + rtol * abs(e)
                else:
                    ok = a == e
                if not ok:
                    bad.append(f"[{i}] = {a!r}, expected {e!r}")
            if bad:
                mismatches.append(f"{name}: {len(bad)} of {len(expected)} elements differ: " + "; ".join(bad[:5]))
        if mismatches:
            print(f"{kernel}: MISMATCH\n  " + "\n  ".join(mismatches))
            self.failed = True
        else:
            print(f"{kernel}: {', '.join(expect)} match")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tesserac", required=True)
    parser.add_argument("--program", help="the .tsr file to compile (default: the test file itself)")
    parser.add_argument("source")
    options = parser.parse_args()
    with open(options.source) as f:
        code = "\n".join(line.split("# PY:", 1)[1][1:] if line.split("# PY:", 1)[1].startswith(" ") else line.split("# PY:", 1)[1]
                         for line in f.read().splitlines() if line.startswith("# PY:"))
    device = os.environ.get("TESSERA_EXEC_DEVICE", "cpu")
    repeat = int(os.environ.get("TESSERA_EXEC_REPEAT", "1"))
    with tempfile.TemporaryDirectory() as workdir:
        checker = Checker(options.tesserac, options.program or options.source, device, workdir)
        namespace = {"Tensor": Tensor, "f32": f32, "math": math, "run": checker.run, "REPEAT": repeat}
        exec(compile(code, options.source + " (# PY: lines)", "exec"), namespace)
    return 1 if checker.failed else 0


if __name__ == "__main__":
    sys.exit(main())
