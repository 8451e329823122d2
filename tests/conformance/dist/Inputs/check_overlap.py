# Checks the one-rank arrays of overlap.tsr's three_in_flight (argv[1] the
# directory) against NumPy: the all_reduce of the row-parallel GEMM is the
# whole product, the all_gather the whole operand, the reduce_scatter (max
# over copies of v) v itself.
import sys

import numpy as np

d = sys.argv[1]
b = np.load(d + "/b.npy").astype(np.float64)
v = np.load(d + "/v.npy").astype(np.float64)
z = np.tanh(v @ v.T).sum()
expected = {"y": b @ b.T * 2.0 + z, "g": b * z, "s": v + z}
for name, want in expected.items():
    got = np.load(f"{d}/{name}.npy").astype(np.float64)
    assert got.shape == want.shape, f"{name}: shape {got.shape}, expected {want.shape}"
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4, err_msg=name)
    print(f"{name}: {got.shape} equals NumPy's")
