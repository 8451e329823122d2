# REQUIRES: numpy
# RUN: %numpy-python %s --tesserac %tesserac --stdlib %S/../../stdlib --workdir %t | FileCheck %s
# stdlib/sort.tsr: sort_rows sorts each row ascending with NaN last and
# gives the columns the values came from: values must equal np.sort(x,
# axis=-1) and indices np.argsort(x, axis=-1, kind="stable"), exactly, for
# T = f32, f64, f16, bf16 (passed as f32 values it holds exactly), i64,
# i32, i16, i8, u64, u32, u16 and u8 (the alias line rewritten).
# Rows of 1, 7 (shorter than the group), 1000 (one chunk of the bitonic
# sort, padded to 1024) and 4097 (three chunks merged in two passes), three
# rows each; f32 rows hold NaN, +-inf, -0.0 and many equal values (the
# stable order of equal keys is checked through indices).
# CHECK-COUNT-30: ok
import sys, os
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "Inputs"))
from stdlib_check import *

rng = np.random.default_rng(27)
NUMPY = {"f32": np.float32, "bf16": np.float32, "f64": np.float64, "f16": np.float16, "i32": np.int32, "i64": np.int64,
         "i8": np.int8, "u8": np.uint8, "u32": np.uint32, "u64": np.uint64,
         "i16": np.int16, "u16": np.uint16}


def row_values(dtype, shape):
    kind = np.dtype(NUMPY[dtype])
    if kind.kind == "f":
        x = rng.integers(-20, 20, size=shape).astype(np.float64) / 4   # many equal values
        special = [np.nan, np.inf, -np.inf, -0.0, 0.0]
        mask = rng.random(shape) < 0.1
        x[mask] = rng.choice(special, size=int(mask.sum()))
        return x.astype(kind)
    info = np.iinfo(kind)
    return rng.integers(max(info.min, -1000), min(info.max, 1000), size=shape, endpoint=True).astype(kind)


def case(h, dtype, rows, columns):
    x = row_values(dtype, (rows, columns))
    zeros = np.zeros_like(x)
    none = np.zeros((rows, columns), np.int64)
    out = h.run("sort_rows", grid=rows, outputs=["values", "indices"],
                inputs={"x": x, "values": zeros, "indices": none, "scratch_values": zeros,
                        "scratch_indices": none})
    print(f"sort_rows {dtype}: {rows} x {columns}")
    h.check("values", out["values"], np.sort(x, axis=-1), 0)
    h.check("indices", out["indices"], np.argsort(x, axis=-1, kind="stable"), 0)


h = Harness("sort.tsr")
for columns in [1, 7, 1000, 4097]:
    case(h, "f32", 3, columns)
for dtype in ["f64", "f16", "bf16", "i32", "i64", "i16", "i8", "u8", "u16", "u32", "u64"]:
    h = Harness("sort.tsr", aliases={"T": dtype})
    case(h, dtype, 3, 1000 if dtype != "i64" else 4097)
h.done()
