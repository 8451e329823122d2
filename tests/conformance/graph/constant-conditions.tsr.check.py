import sys

import numpy as np

out = sys.argv[1]
full = len(sys.argv) > 2
x = np.arange(12, dtype=np.float32).reshape(3, 4) * 0.25 - 1.0
b = np.arange(9, dtype=np.float32).reshape(3, 3)
w = np.full(4, 1.5, dtype=np.float32)
expected = {
    "reduce_keep": x.sum(0, keepdims=True),
    "reduce": x.sum(0),
    "act_relu": np.maximum(x, 0.0),
    "act_rows": x.sum(1),
    "act_tanh": np.tanh(x),
    "scores": x @ x.T * 0.5,
    "scores_scaled": x @ x.T * 2.0,
    "scores_bias": x @ x.T * 0.5 + (0.0 if full else b),
    "shifted": x * 2.0,
    "shifted_2d": x + x.sum(0),
    "shifted_pos": x + w,
    "shifted_neg": x * 2.0,
    "pick_sum": x.sum(0),
    "pick_id": x + w,
    "turned": x.T.reshape(2, 6),
    "turned_6x2": x.reshape(6, 2),
    "grad_mse": 2.0 * (x * x * w).sum(0) / x.size,
    "grad_sum": x.sum(0),
    "summary": x if full else np.float32(x.sum()),
}
for name, want in expected.items():
    got = np.load(f"{out}/{name}.npy")
    assert got.shape == np.shape(want), (name, got.shape, np.shape(want))
    assert np.allclose(got, want, rtol=1e-5, atol=1e-5), (name, got, want)
print("ok")
