# Checks the tangents jvp-collectives.tsr saved against NumPy (two ranks,
# each holding two rows of a and of the tangent t = a / 2 + 1; every sum exact).
import numpy as np
import sys

sys.dont_write_bytecode = True  # nothing written beside the test
from saved_arrays import compare  # noqa: E402

d, n = sys.argv[1], 2
a = np.load(d + "/a.npy").astype(np.float64)
b = np.load(d + "/b.npy").astype(np.float64)
t = a * 0.5 + 1.0
x0, x1 = a[:2], a[2:]
t0, t1 = t[:2], t[2:]
y, ty = a @ b, t @ b
h0, th0 = x0 @ b, t0 @ b
expected = {
    "tangents.npy": np.array([
        2 * np.sum(y * ty),                                    # reduced
        2 * np.sum(y * ty),                                    # gathered (each rank: the whole product)
        2 * 16 * np.sum(a * t),                                # scattered: each rank's part is 4 x its block
        np.sum(t0 * x0 + x0 * t0) + np.sum(t0 * x1 + x0 * t1),  # from_root: rank j holds x0 * x_j
        2 * 2 * np.sum(h0 * th0),                              # piped: both ranks end with h0
        2 * (np.sum(t1 * x0) + np.sum(t0 * x1)),               # shifted
    ]),
}
sys.exit(compare(d, expected))
