# Inputs and NumPy references of scatter.tsr: `make DIR` writes the inputs,
# `check DIR` compares what the program saved.
import sys
import numpy as np

mode, d = sys.argv[1], sys.argv[2]
rng = np.random.default_rng(12)
inputs = {
    "labels": np.array([3, 0, -1, 6, 2], np.int32),
    "table": rng.standard_normal((6, 4)).astype(np.float32),
    "ids": np.array([[0, 5, -1], [2, -6, 3]], np.int64),
    "flat_ids": np.array([2, -1, 0, 2], np.int64),
    "rows_v": rng.standard_normal((4, 4)).astype(np.float32),
    "x3": np.arange(60, dtype=np.float32).reshape(3, 4, 5) * 0.5 - 7.0,
    "i3": np.array([2, 0], np.int32),
    "j4": np.array([[1, -1], [3, 0]], np.int64),
    "k5": np.array([4, 1], np.uint8),
    "k3": np.array([4, -5, 2], np.int64),
    "column": np.array([[1], [2]], np.int32),
    "row": np.array([0, 3, 2], np.int32),
    "flags": np.array([True, False, True, False, False, False]),
    "counts": np.array([7, -3, 0, 12, 5, -9], np.int32),
    "none": np.zeros((0,), np.int32),
    "w": rng.standard_normal((6, 4)).astype(np.float32),
}
if mode == "make":
    for name, a in inputs.items():
        np.save(f"{d}/{name}.npy", a)
    np.save(f"{d}/bad_ids.npy", np.array([2, 6, 0, 1], np.int64))
    sys.exit(0)

v = inputs


def assigned(x, index, value, add=False):
    y = x.copy()
    if add:
        y[index] += value
    else:
        y[index] = value
    return y


x3 = v["x3"]
table = v["table"]
onehot = np.zeros((5, 7), np.float32)
onehot[np.arange(5), v["labels"]] = 1.0
exact = {
    "onehot": onehot,
    "rows": assigned(table, v["ids"], np.arange(24, dtype=np.float32).reshape(2, 3, 4)),
    "added": assigned(table, v["flat_ids"], 10.0, add=True),
    "put": assigned(table, v["flat_ids"], v["rows_v"]),
    "middle": assigned(x3, (slice(None), v["j4"]), np.arange(1, 6, dtype=np.float32)),
    "apart": assigned(x3, (v["i3"], slice(None), v["k5"]), -1.0),
    "with_integer": assigned(x3, (0, v["j4"]), np.arange(20, dtype=np.float32).reshape(2, 2, 5) * 0.5),
    "last": assigned(x3, (Ellipsis, v["k5"]), -100.0, add=True),
    "arange_kept": assigned(x3, (np.arange(3), slice(None), v["k3"]), -np.arange(12, dtype=np.float32).reshape(3, 4)),
    "broadcast": assigned(x3, (v["column"], v["row"]), 9.0),
    "sliced": assigned(x3, (slice(1, 3), v["j4"]), 0.0),
    "flags": assigned(v["flags"], v["ids"], True),
    "counts": assigned(v["counts"], v["flat_ids"], np.int32(-5), add=True),
    "empty": assigned(table, v["none"], 1.0),
    "leading_ones": assigned(table, v["flat_ids"], np.full((1, 4, 4), 2.0, np.float32)),
    "slice_leading_ones": assigned(x3, slice(0, 2), np.ones((1, 1, 2, 4, 5), np.float32)),
}

# Gradients: loss = sum(x' * w), x' = x with x'[ids] = 3 v; loss_add = sum(x'' * x'' * w),
# x'' = x with x''[ids] = x[ids] + 3 v (buffered). Only the last index
# element selecting a row passes a gradient to v.
ids = v["flat_ids"] % 6
last = {int(r): p for p, r in enumerate(ids)}
w, rows_v = v["w"], v["rows_v"]
grad = w.copy()
grad[ids] = 0.0
grad_v = np.zeros_like(rows_v)
for r, p in last.items():
    grad_v[p] = 3.0 * w[r]
y = assigned(table, ids, 3.0 * rows_v, add=True)
grad_add = 2.0 * y * w
grad_add_v = np.zeros_like(rows_v)
for r, p in last.items():
    grad_add_v[p] = 3.0 * grad_add[r]
close = {"grad": grad, "grad_v": grad_v, "grad_add": grad_add, "grad_add_v": grad_add_v}

failed = 0
for name, want in exact.items():
    got = np.load(f"{d}/{name}.npy")
    if got.shape != want.shape or got.dtype != want.dtype or not np.array_equal(got, want):
        print(f"{name}: got {got.dtype}{list(got.shape)} {got}, want {want.dtype}{list(want.shape)} {want}")
        failed = 1
for name, want in close.items():
    got = np.load(f"{d}/{name}.npy")
    if got.shape != want.shape or not np.allclose(got, want, rtol=1e-5, atol=1e-6):
        print(f"{name}: got {got}, want {want}")
        failed = 1
print("failed" if failed else "ok")
sys.exit(failed)
