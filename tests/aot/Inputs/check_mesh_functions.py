"""Checks what tests/aot/mesh_function_main.cpp wrote on each of 2 ranks
against NumPy: row_parallel is the row-parallel GEMM of the global x and w
(every rank holds the whole product), gather_rows every rank's rows of
2 * g + 1 in rank order, total the sum of the ranks' 7-element vectors
(a size known only at run time), local this rank's rows plus one."""
import sys

import numpy as np

out = sys.argv[1]
x = np.array([[(i * 6 + j) % 7 - 3.0 for j in range(6)] for i in range(4)], dtype=np.float32)
w = np.array([[((i * 5 + j) % 5) * 0.5 - 1.0 for j in range(5)] for i in range(6)], dtype=np.float32)
g = np.array([[i * 3 + j for j in range(3)] for i in range(4)], dtype=np.float32)


def load(name, rank, shape):
    return np.fromfile(f"{out}/{name}.{rank}.bin", dtype="<f4").reshape(shape)


for rank in (0, 1):
    np.testing.assert_allclose(load("row_parallel", rank, (4, 5)), x @ w, rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(load("gather_rows", rank, (4, 3)), g * 2 + 1)
    np.testing.assert_array_equal(load("local", rank, (2, 3)), g[2 * rank:2 * rank + 2] + 1)
    v = [np.float32(r * 10) + np.arange(7, dtype=np.float32) * np.float32(0.25) for r in (0, 1)]
    np.testing.assert_array_equal(load("total", rank, (7,)), v[0] + v[1])
print("mesh functions: ok")
