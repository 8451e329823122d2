# Checks what pipeline.tsr saved against NumPy: argv[1] the directory.
import numpy as np
import sys

sys.dont_write_bytecode = True  # nothing written beside the test
from saved_arrays import compare  # noqa: E402

d = sys.argv[1]
a = np.load(d + "/a.npy")
b = np.load(d + "/b.npy")
h = a[:2] @ b  # stage 0's product (its block of rows), received by stage 1
sys.exit(compare(d, {"pipeline.npy": h * h - 1.0}))
