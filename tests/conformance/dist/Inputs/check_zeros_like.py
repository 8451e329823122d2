# Checks what zeros-like-layout.tsr saved against NumPy (any number of
# ranks: every array is the global one).
import numpy as np
import sys

sys.dont_write_bytecode = True  # nothing written beside the test
from saved_arrays import compare  # noqa: E402

d = sys.argv[1]
a = np.load(d + "/a.npy")
expected = {
    "reduced.npy": 3 * a.sum(axis=0),
    "partial.npy": 3 * a.sum(axis=0),
    "ones.npy": np.ones(6, np.float32),
    "zeros.npy": np.zeros((4, 6), np.float32),
    "twos.npy": np.full((4, 6), 2, np.float32),
    "program_partial.npy": a.sum(axis=0),
    "program_ones.npy": np.ones(6, np.float32),
    "program_x.npy": a,
    "program_twos.npy": 2 * a,
}
sys.exit(compare(d, expected))
