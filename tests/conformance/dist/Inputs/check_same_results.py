"""usage: check_same_results.py ONE MANY NAME...: each NAME.npy written by
the one-rank run (ONE) equals the multi-rank run's (MANY), up to the order
of f32 sums (rtol 1e-5)."""
import sys

import numpy as np

one, many, names = sys.argv[1], sys.argv[2], sys.argv[3:]
for name in names:
    a = np.load(f"{one}/{name}.npy").astype(np.float64)
    b = np.load(f"{many}/{name}.npy").astype(np.float64)
    assert a.shape == b.shape, f"{name}: shape {b.shape}, one rank gave {a.shape}"
    np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-5, err_msg=name)
    print(f"{name}: {a.shape} equal (max |x| {np.abs(a).max():.4g})")
