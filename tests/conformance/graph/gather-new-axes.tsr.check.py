# NumPy references of gather-new-axes.tsr, read from the current directory.
import numpy as np
x = np.arange(60.0).reshape(4, 3, 5)
i = np.array([0, 3, -1])
j = np.array([[1], [2]])
want = {"a": x[i, None], "b": x[None, i], "c": x[:, None, j], "d": x[i, None, j], "e": x[None, i, j],
        "f": x[i, j, None], "g": x[0, None, j], "h": x[None, :, j, None], "k": x[i, :, None, j],
        "l": x[..., None, j], "m": x[i, ..., None], "n": x[:, j, None, 1]}
bad = [k for k, w in want.items() if not (np.load(k + ".npy").shape == w.shape and np.array_equal(np.load(k + ".npy"), w))]
print("failed: " + ", ".join(bad) if bad else "ok")
