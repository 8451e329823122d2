# The references of slice-dynamic.tsr (t = 2).
import sys
import numpy as np

d = sys.argv[1]
x = np.arange(35, dtype=np.float32).reshape(5, 7)
t = 2
expected = {"a": x[0:4], "b": x[:, t:t + 3], "c": x[-1], "d": x[1:, ::2], "e": x[:, -2:], "g": x[t - 1, 1:-1]}
for name, want in expected.items():
    got = np.load(f"{d}/{name}.npy")
    assert got.shape == want.shape, (name, got.shape, want.shape)
    assert np.array_equal(got, want), (name, got, want)
print("ok")
