# Checks what ring.tsr saved against NumPy: argv[1] the directory.
import numpy as np
import sys

sys.dont_write_bytecode = True  # nothing written beside the test
from saved_arrays import compare  # noqa: E402

d = sys.argv[1]
a = np.load(d + "/a.npy")  # [4, 6]: one row per rank
expected = {
    "right.npy": np.roll(a, 1, axis=0),   # index j received index j - 1's row
    "left.npy": np.roll(a, -1, axis=0),
    "far.npy": np.roll(a, 6, axis=0),     # shift 6 is shift 2 on 4 ranks
    "chain.npy": a.sum(axis=0, keepdims=True),  # every stage added its row
}
sys.exit(compare(d, expected))
