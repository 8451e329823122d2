# Checks what mesh-2d.tsr saved against NumPy: argv[1] the directory,
# argv[2] and argv[3] the mesh's dp and tp sizes.
import numpy as np
import sys

sys.dont_write_bytecode = True  # nothing written beside the test
from saved_arrays import compare  # noqa: E402

d, dp, tp = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
a = np.load(d + "/a.npy")
b = np.load(d + "/b.npy")
blocks = a.reshape(dp, 4 // dp, 6)
expected = {
    "block_product.npy": a @ b,                          # sharded [dp, tp], saved whole
    "rows_of_product.npy": a @ b,                        # gathered over tp, rows over dp
    "summed_over_dp.npy": 2 * blocks.sum(axis=0),        # row blocks summed: one block, replicated
    "largest_over_dp.npy": blocks.max(axis=0),
}
sys.exit(compare(d, expected))
