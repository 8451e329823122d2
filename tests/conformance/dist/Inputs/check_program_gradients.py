# program-gradients.tsr: `make DIR` writes its inputs, `check DIR` compares
# the gradients the program saved with NumPy's (analytic, in f64).
import sys

import numpy as np

mode, folder = sys.argv[1], sys.argv[2]
names = {"x": (8, 4), "t": (8, 4), "w1": (4, 8), "w2": (8, 4), "b": (4,), "tx": (8, 4), "c": (8, 4)}
if mode == "make":
    rng = np.random.default_rng(1)
    for name, shape in names.items():
        np.save(f"{folder}/{name}.npy", rng.normal(size=shape).astype(np.float32))
    sys.exit(0)
x, t, w1, w2, b, tx, c = [np.load(f"{folder}/{n}.npy").astype(np.float64) for n in names]
h = np.tanh(x @ w1)
y = h @ w2 + b


def backward(dy):
    da = (dy @ w2.T) * (1 - h * h)
    return {"x": da @ w1.T, "w1": x.T @ da, "w2": h.T @ dy, "b": dy.sum(0)}


expected = {"mean_value": np.mean((y - t) ** 2)}
expected.update({f"mean_{k}": v for k, v in backward(2 * (y - t) / y.size).items() if k != "x"})
expected.update({f"total_{k}": v for k, v in backward(2 * (y - t)).items()})
expected["sgd_w1"] = w1 - 0.5 * expected["mean_w1"]
expected["sgd_b"] = b - 0.5 * expected["mean_b"]
expected["jvp"] = ((tx @ w1 + x @ (0.5 * w1)) * (1 - h * h)) @ w2 + b
expected.update({f"vjp_{k}": v for k, v in backward(c).items()})
bad = []
for name, want in expected.items():
    got = np.load(f"{folder}/{name}.npy").astype(np.float64)
    if got.shape != np.shape(want) or not np.allclose(got, want, rtol=1e-4, atol=1e-4):
        bad.append(f"{name}: got {got.shape} {got.ravel()[:4]}, expected {np.shape(want)} {np.ravel(want)[:4]}")
print("\n".join(bad) if bad else f"{len(expected)} arrays match")
sys.exit(1 if bad else 0)
