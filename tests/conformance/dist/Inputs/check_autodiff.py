# Checks the gradients autodiff-collectives.tsr saved against NumPy (two
# ranks; every rank's result counts once in the sum that is differentiated).
import numpy as np
import sys

sys.dont_write_bytecode = True  # nothing written beside the test
from saved_arrays import compare  # noqa: E402

d, n = sys.argv[1], 2
a = np.load(d + "/a.npy")
b = np.load(d + "/b.npy")
blocks = a.reshape(n, 2, 6)
zero = np.zeros_like(blocks[0])
y = a @ b
expected = {
    # n ranks each return the global loss sum((a b)^2): n times its gradient.
    "reduced_x.npy": n * 2 * y @ b.T,
    "reduced_w.npy": n * 2 * a.T @ y,
    "gathered_x.npy": n * 2 * y @ b.T,
    # Every rank returns sum(x_0^2): the root's block gets n * 2 x_0, the other none.
    "root_x.npy": np.concatenate([n * 2 * blocks[0], zero]),
    # Rank 1 receives h_0 = x_0 b, rank 0 keeps its own h_0: 2 sum(h_0^2).
    "piped_x.npy": np.concatenate([2 * 2 * (blocks[0] @ b) @ b.T, zero]),
    # sum_j sum(x_{j-1} x_j): the gradient of x_j is x_{j-1} + x_{j+1}.
    "shifted_x.npy": np.concatenate([2 * blocks[1], 2 * blocks[0]]),
}
sys.exit(compare(d, expected))
