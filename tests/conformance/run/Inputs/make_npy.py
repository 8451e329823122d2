#!/usr/bin/env python3
"""make_npy.py OUT.npy DTYPE SHAPE EXPR: writes a .npy file whose element i
(row-major) is EXPR evaluated with `i` bound (plain Python, no NumPy).
SHAPE is comma-separated, e.g. 4,3."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "exec", "Inputs"))
from exec_check import Tensor, write_npy  # noqa: E402

out, dtype, shape, expr = sys.argv[1:5]
dims = [int(d) for d in shape.split(",")] if shape else []
count = 1
for d in dims:
    count *= d
write_npy(out, Tensor(dtype, dims, [eval(expr, {"i": i}) for i in range(count)]))
