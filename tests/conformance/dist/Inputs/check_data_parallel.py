# Checks data-parallel-step.tsr: the weights after the steps on one rank and
# on two ranks against each other and against NumPy (argv: the two
# directories; the inputs are in the first).
import numpy as np
import sys

one, two = sys.argv[1], sys.argv[2]
x = np.load(one + "/a.npy").astype(np.float64) * 0.1
w = np.load(one + "/b.npy").astype(np.float64) * 0.1
for _ in range(5):
    y = np.tanh(x @ w)
    g = x.T @ (2 * y * (1 - y * y)) / y.size
    w = w - 0.5 * g
w1, w2 = np.load(one + "/w.npy"), np.load(two + "/w.npy")
ok = np.allclose(w1, w, rtol=1e-4, atol=1e-6) and np.allclose(w2, w, rtol=1e-4, atol=1e-6)
print("one rank vs NumPy:", np.max(np.abs(w1 - w)), "two ranks vs NumPy:", np.max(np.abs(w2 - w)))
sys.exit(0 if ok else 1)
