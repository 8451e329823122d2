import sys

import numpy as np

out = sys.argv[1]
ax = int(sys.argv[2]) if len(sys.argv) > 2 else 0
x = np.arange(12, dtype=np.float32).reshape(3, 4) * 0.5 - 2.0
x3 = np.arange(24, dtype=np.float32).reshape(2, 3, 4)


def ln(x, eps):
    m = x.mean(-1, keepdims=True)
    v = ((x - m) ** 2).mean(-1, keepdims=True)
    return (x - m) / np.sqrt(v + eps)


expected = {
    "centre_last": x - x.max(-1, keepdims=True),
    "centre_0": x - x.max(0, keepdims=True),
    "centre_0_flat": x - x.max(0),
    "squares_ax": (x * x).sum(ax),
    "squares_neg": (x * x).sum(-2, keepdims=True),
    "outer": (x * x).sum(1) + 1.0,
    "outer_ax": (x * x).sum(ax) + 1.0,
    "norm": ln(x, 1e-5),
    "norm_half": ln(x, 0.5),
    "grad": 2.0 * x,
    "total_default": x3.sum((0, 2)),
    "total_axes": x3.sum((1, 2)),
    "total_last": x3.sum(-1),
    "mean_program": x3.mean((1, 2)),
    "mean_module": x3.mean((1, 2)),
    "act_default": np.maximum(x, 0.0),
    "act_sigmoid": 1.0 / (1.0 + np.exp(-x)),
    "act_mode": 1.0 / (1.0 + np.exp(-x)),
}
for name, want in expected.items():
    got = np.load(f"{out}/{name}.npy")
    assert got.shape == want.shape, (name, got.shape, want.shape)
    assert np.allclose(got, want, rtol=1e-5, atol=1e-5), (name, got, want)
print("ok")
