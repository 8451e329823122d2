"""usage: check_equal_to_a.py DIR NAME...: each DIR/NAME.npy equals
DIR/a.npy exactly (partial-data.tsr: the global value of a partial
dist.tensor made from a is a)."""
import sys

import numpy as np

folder, names = sys.argv[1], sys.argv[2:]
a = np.load(f"{folder}/a.npy").astype(np.float64)
for name in names:
    got = np.load(f"{folder}/{name}.npy").astype(np.float64)
    assert got.shape == a.shape and np.array_equal(got, a), f"{name}: {got.shape}\n{got}\nexpected\n{a}"
    print(f"{name}: equal to a")
