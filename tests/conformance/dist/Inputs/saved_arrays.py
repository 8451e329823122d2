# Compares the .npy files a distributed test saved with NumPy's expected
# arrays (exactly: the inputs are small integers); prints one line per file
# and returns the exit status. equal_nan: NaN equals NaN (where the NaNs
# are is part of what is checked). rtol: close to that relative tolerance
# instead (exp, softmax).
import numpy as np


def compare(directory, expected, check_dtype=False, equal_nan=False, rtol=None):
    failed = False
    for name, want in expected.items():
        got = np.load(directory + "/" + name)
        wrong_dtype = check_dtype and got.dtype != want.dtype
        same = (np.allclose(got, want, rtol=rtol, atol=rtol * 1e-2, equal_nan=equal_nan) if rtol is not None
                else np.array_equal(got, want, equal_nan=equal_nan))
        if got.shape != want.shape or wrong_dtype or not same:
            print(f"{name}: got {got.dtype}{got.shape}\n{got}\nexpected {want.dtype}{want.shape}\n{want}")
            failed = True
        else:
            print(f"{name}: ok {got.shape}")
    return 1 if failed else 0
