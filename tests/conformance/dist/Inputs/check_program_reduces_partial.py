# Checks what program-reduces-partial.tsr saved against NumPy: argv[1] the
# directory.
import numpy as np
import sys

sys.dont_write_bytecode = True  # nothing written beside the test
from saved_arrays import compare  # noqa: E402

d = sys.argv[1]
a = np.load(d + "/a.npy")
c = np.arange(32, dtype=np.float32).reshape(4, 8)
p = c.T @ c
e = np.exp(p * 0.01 - (p * 0.01).max(axis=-1, keepdims=True))
expected = {
    "exp_max.npy": np.exp(a.max(axis=0) * 0.25),
    "squared.npy": a.sum(axis=0) ** 2,
    "mean_plus.npy": a.mean(axis=0) - 2.0,
    "linear.npy": a.sum(axis=0) * 2.0,
    "softmax.npy": e / e.sum(axis=-1, keepdims=True),
    "row_max.npy": p.max(axis=1),
    "clipped.npy": np.where(p > 1000, p, 0),
    "relu_q.npy": np.maximum(p - 1500, 0),
}
sys.exit(compare(d, expected, rtol=1e-5))
