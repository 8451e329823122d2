# Checks what ring-loop.tsr saved against NumPy: argv[1] the directory,
# argv[2] the number of ranks.
import numpy as np
import sys

sys.dont_write_bytecode = True  # nothing written beside the test
from saved_arrays import compare  # noqa: E402

d, n = sys.argv[1], int(sys.argv[2])
a = np.load(d + "/a.npy")
block_sum = a.reshape(n, 4 // n, 6).sum(axis=0)
expected = {
    "gathered.npy": np.tile(block_sum, (n, 1)),
    "reduced.npy": block_sum,
    "from_split.npy": a,
    "shifted_once.npy": np.roll(a, 4 // n, axis=0),
}
sys.exit(compare(d, expected))
