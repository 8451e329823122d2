# Checks what collectives-in-program.tsr saved against NumPy: argv[1] the
# directory, argv[2] the number of ranks.
import numpy as np
import sys

sys.dont_write_bytecode = True  # nothing written beside the test
from saved_arrays import compare  # noqa: E402

d, n = sys.argv[1], int(sys.argv[2])
a = np.load(d + "/a.npy")
c = np.arange(32, dtype=np.float32).reshape(4, 8)
block = 4 // n
expected = {
    "total.npy": np.array(a.sum() * 2, np.float32),
    "col_max.npy": a.max(axis=0),
    "col_mean.npy": a.mean(axis=0),
    "blocks.npy": a.reshape(n, block, 6).sum(axis=0),
    "gathered.npy": a,
    "last.npy": a[4 - block:],
    "rolled.npy": np.roll(a, block, axis=0),
    "scattered.npy": c.T @ c,
}
sys.exit(compare(d, expected))
