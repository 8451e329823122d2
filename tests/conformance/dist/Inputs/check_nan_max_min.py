# Checks what nan-max-min.tsr saved against NumPy: argv[1] the directory,
# argv[2] the number of ranks. np.max and np.min (np.maximum.reduce) give NaN
# where any rank's block holds one.
import numpy as np
import sys

sys.dont_write_bytecode = True  # nothing written beside the test
from saved_arrays import compare  # noqa: E402

d, n = sys.argv[1], int(sys.argv[2])
a = np.load(d + "/a.npy")
blocks = a.reshape(n, 16 // n, 8)
high, low = blocks.max(axis=0), blocks.min(axis=0)
expected = {
    "max_f32.npy": high,
    "min_f32.npy": low,
    "max_f64.npy": high.astype(np.float64),
    "min_f16.npy": low,
    "max_bf16.npy": high,
    "scatter_max.npy": high,
    "scatter_min_rows.npy": low,
    "partial_max.npy": a.max(axis=0),
}
sys.exit(compare(d, expected, check_dtype=True, equal_nan=True))
