# Compares the .npy files a distributed test saved with NumPy's expected
# arrays (exactly: the inputs are small integers); prints one line per file
# and returns the exit status.
import numpy as np


def compare(directory, expected, check_dtype=False):
    failed = False
    for name, want in expected.items():
        got = np.load(directory + "/" + name)
        wrong_dtype = check_dtype and got.dtype != want.dtype
        if got.shape != want.shape or wrong_dtype or not np.array_equal(got, want):
            print(f"{name}: got {got.dtype}{got.shape}\n{got}\nexpected {want.dtype}{want.shape}\n{want}")
            failed = True
        else:
            print(f"{name}: ok {got.shape}")
    return 1 if failed else 0
