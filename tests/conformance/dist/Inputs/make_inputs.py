# Inputs of the distributed exec tests: a.npy [4, 6], b.npy [6, 8], float32,
# small integers so that every sum is exact.
import numpy as np
import sys

rng = np.random.default_rng(7)
np.save(sys.argv[1] + "/a.npy", rng.integers(-4, 5, size=(4, 6)).astype(np.float32))
np.save(sys.argv[1] + "/b.npy", rng.integers(-4, 5, size=(6, 8)).astype(np.float32))
