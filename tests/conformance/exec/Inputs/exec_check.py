#!/usr/bin/env python3
"""Execution tests: run a .tsr kernel with `tesserac run` and compare the
results with a reference computed here, in plain Python.

The test file holds its cases in comment lines starting with `# PY:`; they are
Python that calls run(kernel, grid=..., <parameter>=<value>..., expect={...}).
A tensor argument is Tensor(dtype, shape, values) (values row-major), a scalar
is (dtype, value). `expect` maps each mut tensor to its expected values (a
flat list, or a function of the actual values returning what is wrong or
None, for results whose order is not fixed), compared exactly for integers and within `rtol`/`atol` for floats.
`fails="text"` instead expects the run to fail (exit 1) with that text in its
message (checked on the CPU; on a GPU the exit code only): bounds checks.

Tensors of bf16, fp8_e4m3, fp8_e5m2, fp6_e2m3, fp6_e3m2 and fp4_e2m1 take
float values: they are encoded here (round to nearest even, overflow as
docs/numerics.md says) and passed to `tesserac run` as .npy files of codes
(uint8, uint16 for bf16; one element per code, which tesserac run packs);
their --out codes are decoded here and compared exactly (NaN matches NaN, and
the sign of a zero counts). The encoder and decoder below are written from
the format definitions with exact rational arithmetic, independently of the
C++ header tessera/numerics.hpp. The test code may call encode(dtype, x),
decode(dtype, code) and quantize(dtype, x) = decode(encode(x)).
Prints one line per case ("<kernel>: <names> match") or the first mismatches
and exits 1. TESSERA_EXEC_DEVICE picks the device (default: cpu), TESSERA_EXEC_MMA the
tensor-core instruction on a GPU (`tesserac run --mma`), TESSERA_EXEC_CPU_LANES
the CPU target's lanes (`tesserac run --cpu-lanes`: loops or fibers), TESSERA_EXEC_REPEAT
repeats every case (the barrier stress test runs 100 times).

No NumPy needed: .npy files are written and read with `struct`.
"""
import argparse
import ast
import fractions
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

# The narrow float formats: exponent bits, mantissa bits, bias, and how they
# encode infinities and NaNs ("ieee": exponent all ones; "allones": only
# S.1111.111 is NaN, no inf (OCP E4M3); "none": every code is a number).
NARROW = {
    "bf16": (8, 7, 127, "ieee"), "fp8_e4m3": (4, 3, 7, "allones"), "fp8_e5m2": (5, 2, 15, "ieee"),
    "fp6_e2m3": (2, 3, 1, "none"), "fp6_e3m2": (3, 2, 3, "none"), "fp4_e2m1": (2, 1, 1, "none"),
}


# Encoding parameters also for f16 (whose tensors travel as native float16)
# and f32 (the exact rounding of wider values: integers, f64).
ENCODING = dict(NARROW, f16=(5, 10, 15, "ieee"), f32=(8, 23, 127, "ieee"))


def _max_magnitude_code(dtype):
    e, m, _, kind = ENCODING[dtype]
    if kind == "ieee":
        return ((2 ** e - 2) << m) | (2 ** m - 1)
    if kind == "allones":
        return 2 ** (e + m) - 2
    return 2 ** (e + m) - 1


def _value_of(dtype, magnitude):
    """The exact value (a Fraction) of a finite non-negative code."""
    e, m, bias, _ = ENCODING[dtype]
    exp, man = magnitude >> m, magnitude & (2 ** m - 1)
    if exp == 0:
        return fractions.Fraction(man) * fractions.Fraction(2) ** (1 - bias - m)
    return (1 + fractions.Fraction(man, 2 ** m)) * fractions.Fraction(2) ** (exp - bias)


def decode(dtype, code):
    """The value of a code as a Python float (NaN for the NaN codes)."""
    e, m, _, kind = NARROW[dtype]
    sign = -1.0 if (code >> (e + m)) & 1 else 1.0
    magnitude = code & (2 ** (e + m) - 1)
    if kind == "ieee" and magnitude >> m == 2 ** e - 1:
        return sign * math.inf if magnitude & (2 ** m - 1) == 0 else math.nan
    if kind == "allones" and magnitude == 2 ** (e + m) - 1:
        return math.nan
    return sign * float(_value_of(dtype, magnitude))


def _floor_log2(a):
    """floor(log2(a)) of a positive Fraction, exactly."""
    e = a.numerator.bit_length() - a.denominator.bit_length()
    return e if fractions.Fraction(2) ** e <= a else e - 1


def encode(dtype, x, rounding="rne", saturate=False, random=0):
    """The code of the f32 value x in dtype (docs/numerics.md, "Encoding"),
    or of any exact value (an int, a Fraction, an f64 float) rounded once.

    rounding: "rne" (nearest, ties to the even code), "rna" (nearest, ties
    away from zero), "rz", "ru" (toward +inf), "rd" (toward -inf), or
    "stochastic": away from zero when the R = 23 - M bits of |x| just below
    the kept least significant bit plus the low R bits of `random` carry.
    Overflow (rounding beyond the largest finite value) gives inf (bf16, f16,
    e5m2), the NaN 0x7F (e4m3), the largest finite value (fp6, fp4); with
    `saturate`, or when the rounding moved toward zero for x's sign, the
    largest finite value of the sign. Infinities: the largest finite value
    under `saturate`, else as an overflow. A NaN gives the canonical NaN (all
    ones, positive) or the positive largest finite value."""
    e, m, bias, kind = ENCODING[dtype]
    sign_bit = 1 << (e + m)
    max_code = _max_magnitude_code(dtype)
    if math.isnan(x):
        return 2 ** (e + m) - 1 if kind != "none" else max_code
    negative = math.copysign(1.0, x) < 0
    sign = sign_bit if negative else 0
    propagate = (sign | (2 ** e - 1) << m) if kind == "ieee" else 2 ** (e + m) - 1 if kind == "allones" else sign | max_code
    if math.isinf(x):
        return sign | max_code if saturate else propagate
    a = fractions.Fraction(abs(x))
    if a == 0:
        return sign
    exponent = max(_floor_log2(a), 1 - bias)
    quantum = fractions.Fraction(2) ** (exponent - m)
    k = a / quantum
    steps = math.floor(k)
    rest = k - steps
    half = fractions.Fraction(1, 2)
    if rounding == "rne":
        up = rest > half or (rest == half and steps % 2 == 1)
    elif rounding == "rna":
        up = rest >= half
    elif rounding == "rz":
        up = False
    elif rounding == "ru":
        up = rest != 0 and not negative
    elif rounding == "rd":
        up = rest != 0 and negative
    elif rounding == "stochastic":
        r = 23 - m
        # The R bits of |x| just below the kept LSB: floor(rest * 2^R).
        up = math.floor(rest * 2 ** r) + (random & (2 ** r - 1)) >= 2 ** r
    else:
        raise ValueError(f"unknown rounding {rounding!r}")
    if up:
        steps += 1
    value = steps * quantum
    if value > _value_of(dtype, max_code):
        toward_zero = rounding == "rz" or (rounding == "rd" and not negative) or (rounding == "ru" and negative)
        return sign | max_code if saturate or toward_zero else propagate
    # The code of the (now exact) value: subnormal, or normal with exponent field.
    if value < fractions.Fraction(2) ** (1 - bias):
        return sign | int(value / fractions.Fraction(2) ** (1 - bias - m))
    exp = math.frexp(float(value))[1] - 1
    man = int(value / fractions.Fraction(2) ** (exp - m)) - 2 ** m
    return sign | ((exp + bias) << m) | man


def decode_any(dtype, code):
    """decode() for f16 and f32 too."""
    if dtype == "f16":
        return struct.unpack("<e", struct.pack("<H", code))[0]
    if dtype == "f32":
        return struct.unpack("<f", struct.pack("<I", code))[0]
    return decode(dtype, code)


def quantize_with(dtype, x, rounding="rne", saturate=False, random=0):
    """The value x becomes when stored into dtype with this policy."""
    return decode_any(dtype, encode(dtype, f32(x), rounding, saturate, random))


MASK32 = 0xFFFFFFFF


def philox4x32_10(counter, key):
    """Philox-4x32-10 (Salmon, Moraes, Dror, Shaw, SC'11), from the paper's
    definition: ten rounds, key bumped by the Weyl constants between them."""
    c0, c1, c2, c3 = counter
    k0, k1 = key
    for round_ in range(10):
        if round_ > 0:
            k0, k1 = (k0 + 0x9E3779B9) & MASK32, (k1 + 0xBB67AE85) & MASK32
        p0 = 0xD2511F53 * c0
        p1 = 0xCD9E8D57 * c2
        c0, c1, c2, c3 = ((p1 >> 32) ^ c1 ^ k0) & MASK32, p1 & MASK32, ((p0 >> 32) ^ c3 ^ k1) & MASK32, p0 & MASK32
    return c0, c1, c2, c3


def random_bits(seed, counter):
    """Word counter % 4 of the Philox block counter // 4 under key seed
    (docs/numerics.md, "The random bits")."""
    seed &= (1 << 64) - 1
    block = counter >> 2
    words = philox4x32_10((block & MASK32, (block >> 32) & MASK32, 0, 0), (seed & MASK32, seed >> 32))
    return words[counter & 3]


# Random123's known answer for Philox-4x32-10 (kat_vectors): counter and key
# all ones. Checked whenever the harness runs a test that uses random bits.
assert philox4x32_10((MASK32,) * 4, (MASK32, MASK32)) == (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)


def quantize(dtype, x):
    return decode(dtype, encode(dtype, f32(x)))


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
    if tensor.dtype in NARROW:
        codes = "u16" if tensor.dtype == "bf16" else "u8"
        tensor = Tensor(codes, tensor.shape, [encode(tensor.dtype, f32(v)) for v in tensor.values])
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

    def run(self, kernel, grid, expect, rtol=1e-5, atol=1e-6, group=None, fails=None, **arguments):
        """`fails`: the run must fail (exit 1) instead, its message containing
        this text on the CPU (a GPU's device-side assert words it otherwise)."""
        self.count += 1
        command = [self.tesserac, "run", self.source, "--kernel", kernel, "--grid", str(grid), "--quiet"]
        if self.device:
            command += ["--device", self.device]
        if os.environ.get("TESSERA_EXEC_MMA"):
            command += ["--mma", os.environ["TESSERA_EXEC_MMA"]]
        if os.environ.get("TESSERA_EXEC_CPU_LANES"):
            command += ["--cpu-lanes", os.environ["TESSERA_EXEC_CPU_LANES"]]
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
        if fails is not None:
            on_cpu = (self.device or "cpu") == "cpu"
            if result.returncode != 1 or (on_cpu and fails not in result.stderr):
                print(f"{kernel}: expected a failure with '{fails}', got exit code {result.returncode}:\n{result.stderr}")
                self.failed = True
            else:
                print(f"{kernel}: fails as expected")
            return
        if result.returncode != 0:
            print(f"{kernel}: tesserac run failed with exit code {result.returncode}:\n{result.stderr}")
            self.failed = True
            return
        mismatches = []
        for name, expected in expect.items():
            actual = read_npy(outputs[name])
            if callable(expected):  # a check of its own: returns what is wrong, or nothing
                problem = expected(actual)
                if problem:
                    mismatches.append(f"{name}: {problem}")
                continue
            if len(actual) != len(expected):
                mismatches.append(f"{name}: {len(actual)} elements, expected {len(expected)}")
                continue
            dtype = arguments[name].dtype if isinstance(arguments.get(name), Tensor) else None
            if dtype in NARROW:
                actual = [decode(dtype, c) for c in actual]
            bad = []
            for i, (a, e) in enumerate(zip(actual, expected)):
                if dtype in NARROW:
                    e = float(e)
                    ok = (math.isnan(a) and math.isnan(e)) or (a == e and math.copysign(1, a) == math.copysign(1, e))
                elif isinstance(e, float) or isinstance(a, float):
                    ok = a == e or (math.isnan(a) and math.isnan(e)) or abs(a - e) <= atol + rtol * abs(e)
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
        namespace = {"Tensor": Tensor, "f32": f32, "math": math, "run": checker.run, "REPEAT": repeat,
                     "encode": encode, "decode": decode, "quantize": quantize, "quantize_with": quantize_with,
                     "decode_any": decode_any, "random_bits": random_bits}
        exec(compile(code, options.source + " (# PY: lines)", "exec"), namespace)
    return 1 if checker.failed else 0


if __name__ == "__main__":
    sys.exit(main())
