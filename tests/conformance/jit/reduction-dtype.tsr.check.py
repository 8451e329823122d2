import sys

import numpy as np

out = sys.argv[1]
x = ((np.arange(2048, dtype=np.float32).reshape(2, 1024) * np.float32(0.01)) + np.float32(0.1)).astype(np.float16)
n = np.arange(6, dtype=np.int32).reshape(2, 3) * 1000000
expected = {
    "sum_f32": (x.astype(np.float32).sum(), 1e-5),
    "sum_axis_f32": (x.astype(np.float32).sum(1), 1e-5),
    "mean_f32": (x.astype(np.float32).mean(0, keepdims=True), 1e-5),
    "sum_i32_f64": (n.sum(dtype=np.float64), 0),
    "prod_f64": ((n[:, 1:] + 1).prod(1, dtype=np.float64), 1e-12),
    "sum_bool": (np.ones((3, 4), np.float32).sum(1, dtype=bool), 0),
    "sum_bool_all": (n.sum(dtype=bool), 0),
    "sum_bool_none": (n[0:1, 0:1].sum(dtype=bool), 0),
}
for name, (want, rtol) in expected.items():
    got = np.load(f"{out}/{name}.npy")
    assert got.dtype == want.dtype, (name, got.dtype, want.dtype)
    assert got.shape == np.shape(want), (name, got.shape, np.shape(want))
    assert np.allclose(got, want, rtol=rtol, atol=0), (name, got, want)
# Without dtype= the f16 sum is f32 too (narrow floats accumulate in f32).
assert np.load(f"{out}/sum_f16.npy").dtype == np.float32
print("ok")
