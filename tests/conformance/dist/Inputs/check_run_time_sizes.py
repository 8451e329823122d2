"""run-time-sizes.tsr: the results of one run (DIR) on RANKS ranks that all
passed the same x.npy (6 elements) and g.npy (4 x 3); rank 0 wrote them."""
import sys

import numpy as np

inputs, out, ranks = sys.argv[1], sys.argv[2], int(sys.argv[3])
x = np.load(f"{inputs}/x.npy")
g = np.load(f"{inputs}/g.npy")
np.testing.assert_array_equal(np.load(f"{out}/total.npy"), ranks * (x * 2))
np.testing.assert_array_equal(np.load(f"{out}/gathered.npy"), np.concatenate([g] * ranks, axis=0))
np.testing.assert_array_equal(np.load(f"{out}/scattered.npy"), g[:4 // ranks])
np.testing.assert_array_equal(np.load(f"{out}/shifted.npy"), x + 1)
print(f"run-time sizes on {ranks} ranks: ok")
