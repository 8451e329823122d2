# NumPy references of grad-pytree.tsr.
import sys

import numpy as np

d = sys.argv[1]
x = np.arange(6.0).reshape(2, 3) * 0.1
W1 = np.arange(12.0).reshape(3, 4) * 0.05 - 0.2
b1 = np.arange(4.0) * 0.1
W2 = np.arange(8.0).reshape(4, 2) * -0.1 + 0.3


def forward(W1, b1, W2):
    h = np.tanh(x @ W1 + b1)
    return h, (h @ W2).sum()


def gradients(W1, b1, W2):
    h, _ = forward(W1, b1, W2)
    G = np.ones((2, 2))
    dW2 = h.T @ G
    da = (G @ W2.T) * (1 - h * h)
    return x.T @ da, da.sum(0), dW2


gW1, gb1, gW2 = gradients(W1, b1, W2)
zero = np.zeros(4)
sW1, _, sW2 = gradients(W1, zero, W2)
value = forward(W1, zero, W2)[1] * 2.0
P = [W1, W2]
for _ in range(3):
    g1, _, g2 = gradients(P[0], zero, P[1])
    P = [P[0] - 0.5 * g1, P[1] - 0.5 * g2]
want = {"gW1": gW1, "gb1": gb1, "gW2": gW2, "value": value, "sW1": sW1 * 2.0, "sW2": sW2 * 2.0,
        "ds": forward(W1, zero, W2)[1], "trained": forward(P[0], zero, P[1])[1]}
bad = [k for k, w in want.items() if not np.allclose(np.load(f"{d}/{k}.npy"), w, rtol=1e-5, atol=1e-6)]
print("failed: " + ", ".join(bad) if bad else "ok")
