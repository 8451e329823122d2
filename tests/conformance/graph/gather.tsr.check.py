# Inputs and NumPy references of gather.tsr: `make DIR` writes the inputs,
# `check DIR` compares what the program saved.
import sys
import numpy as np

mode, d = sys.argv[1], sys.argv[2]
rng = np.random.default_rng(11)
inputs = {
    "lp": rng.standard_normal((5, 7)).astype(np.float32),
    "labels": np.array([3, 0, -1, 6, 2], np.int32),
    "table": rng.standard_normal((6, 4)).astype(np.float32),
    "ids": np.array([[0, 5, -1], [2, -6, 3]], np.int64),
    "x3": np.arange(60, dtype=np.float32).reshape(3, 4, 5) * 0.5 - 7.0,
    "i3": np.array([2, 0], np.int32),
    "j4": np.array([[1, -1], [3, 0]], np.int64),
    "k5": np.array([4, 1], np.uint8),
    "k3": np.array([4, -5, 2], np.int64),
    "column": np.array([[1], [2]], np.int32),
    "row": np.array([0, 3, 2], np.int32),
    "flags": np.array([True, False, True, True, False, False]),
    "counts": np.array([7, -3, 0, 12, 5, -9], np.int32),
    "none": np.zeros((0,), np.int32),
}
if mode == "make":
    for name, a in inputs.items():
        np.save(f"{d}/{name}.npy", a)
    np.save(f"{d}/bad_labels.npy", np.array([3, 0, 7, 6, 2], np.int32))
    sys.exit(0)

v = inputs
logits = v["lp"]
shifted = logits - logits.max(axis=-1, keepdims=True)
log_p = shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
picked = log_p[np.arange(5), v["labels"]]
loss = -picked.mean()
softmax = np.exp(log_p)
onehot = np.zeros_like(softmax)
onehot[np.arange(5), v["labels"]] = 1.0
grad = (softmax - onehot) / 5.0
embedding_grad = np.zeros_like(v["table"])
np.add.at(embedding_grad, v["ids"], 2.0 * v["table"][v["ids"]])
exact = {
    "picked": v["lp"][np.arange(5), v["labels"]],
    "pick": v["lp"][np.arange(5), v["labels"]],
    "rows": v["table"][v["ids"]],
    "middle": v["x3"][:, v["j4"]],
    "apart": v["x3"][v["i3"], :, v["k5"]],
    "with_integer": v["x3"][0, v["j4"]],
    "last": v["x3"][..., v["k5"]],
    "sliced": v["x3"][v["i3"], 1:3],
    "reversed": v["x3"][::-1, v["j4"]],
    "sliced_apart": v["x3"][1:, :, v["k5"]],
    "arange_alone": v["table"][np.arange(6)],
    "arange_broadcast": v["lp"][np.arange(5), v["labels"][0:1]],
    "arange_kept": v["x3"][np.arange(3), :, v["k3"]],
    "arange_second": v["x3"][v["i3"], np.arange(2)],
    "broadcast": v["x3"][v["column"], v["row"]],
    "flags": v["flags"][v["ids"]],
    "counts": v["counts"][v["ids"]],
    "sum_of": v["table"][v["ids"]].sum(axis=-1) * 2.0,
    "empty": v["table"][v["none"]],
}
failed = 0
for name, want in exact.items():
    got = np.load(f"{d}/{name}.npy")
    if got.shape != want.shape or got.dtype != want.dtype or not np.allclose(got, want, rtol=1e-6, atol=0):
        print(f"{name}: got {got.dtype}{list(got.shape)} {got}, want {want.dtype}{list(want.shape)} {want}")
        failed = 1
for name, want in {"loss": loss, "grad": grad, "embedding_grad": embedding_grad}.items():
    got = np.load(f"{d}/{name}.npy")
    if got.shape != np.shape(want) or not np.allclose(got, want, rtol=1e-5, atol=1e-6):
        print(f"{name}: got {got}, want {want}")
        failed = 1
print("failed" if failed else "ok")
sys.exit(failed)
