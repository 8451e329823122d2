# Checks what collectives.tsr saved against NumPy: argv[1] the directory,
# argv[2] the number of ranks.
import numpy as np
import sys

sys.dont_write_bytecode = True  # nothing written beside the test
from saved_arrays import compare  # noqa: E402

d, n = sys.argv[1], int(sys.argv[2])
a = np.load(d + "/a.npy")
b = np.load(d + "/b.npy")
expected = {
    "gathered.npy": a,                       # all_gather of row blocks
    "summed.npy": a.reshape(n, 4 // n, 6).sum(axis=0),  # all_reduce of row blocks
    "col_gemm.npy": a @ b,                   # column-parallel GEMM, gathered in the function
    "col_sharded.npy": a @ b,                # column-sharded result saved whole
    "row_gemm.npy": a @ b,                   # row-parallel GEMM: partial sums, all_reduce
    "row_partial.npy": a @ b,                # a partial sum saved whole (reduced on save)
    "scattered.npy": a @ b,                  # reduce_scatter of a partial sum, saved whole
    "broadcast.npy": a[: 4 // n],            # rank 0's block
    "zeros.npy": np.zeros((4, 6), np.float32),
}
sys.exit(compare(d, expected))
