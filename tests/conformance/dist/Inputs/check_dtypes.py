# Checks what dtypes.tsr saved against NumPy: argv[1] the directory, argv[2]
# the number of ranks.
import numpy as np
import sys

sys.dont_write_bytecode = True  # nothing written beside the test
from saved_arrays import compare  # noqa: E402

d, n = sys.argv[1], int(sys.argv[2])
a = np.load(d + "/a.npy")
blocks = a.reshape(n, 4 // n, 6)
expected = {
    "sum_bf16.npy": blocks.sum(axis=0).astype(np.float32),
    "max_f16.npy": blocks.max(axis=0).astype(np.float32),
    "min_f64.npy": blocks.min(axis=0).astype(np.float64),
    "sum_i32.npy": blocks.sum(axis=0).astype(np.int32),
    "prod_i64.npy": blocks.astype(np.int64).prod(axis=0),
    "gather_i8.npy": a.astype(np.int8),
    "broadcast_f16.npy": blocks[0].astype(np.float32),
    "partial_prod.npy": a.prod(axis=0),
}
sys.exit(compare(d, expected, check_dtype=True))
