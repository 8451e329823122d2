#!/usr/bin/env python3
"""Every kernel of the examples and the seed tests lowers to verified Tile IR.

For each .tsr file under the given directories that holds a kernel and
checks cleanly (`tesserac -fsyntax-only` exits 0), `tesserac --emit=tile-ir`
must succeed, and its output must parse, verify and print back identically
in `tesserac-opt` (TESSERA_CHECK_ROUND_TRIP=1 checks the round trip). The
standard pass pipeline (`tesserac-opt --default-pipeline`) must then accept
it too: a pass that rejects or breaks a valid kernel is a compiler bug.
"""
import os
import pathlib
import re
import subprocess
import sys


def main() -> int:
    tesserac, tesserac_opt, *directories = sys.argv[1:]
    env = dict(os.environ, TESSERA_CHECK_ROUND_TRIP="1")
    failures, lowered = [], 0
    for directory in directories:
        for path in sorted(pathlib.Path(directory).glob("*.tsr")):
            text = path.read_text(encoding="utf-8", errors="replace")
            if not re.search(r"^\s*@(ts\.)?kernel\b", text, re.MULTILINE):
                continue  # no kernel (only @jit functions or a program)
            if subprocess.run([tesserac, "-fsyntax-only", "-w", str(path)], capture_output=True).returncode != 0:
                continue  # a seed fragment with expected errors
            ir = subprocess.run([tesserac, "--emit=tile-ir", "-w", str(path)], capture_output=True, text=True, env=env)
            if ir.returncode != 0:
                failures.append(f"{path}: tesserac --emit=tile-ir failed:\n{ir.stderr}")
                continue
            if "func.func" not in ir.stdout:
                continue  # kernel only in a comment or string
            opt = subprocess.run([tesserac_opt, "-"], input=ir.stdout, capture_output=True, text=True, env=env)
            if opt.returncode != 0:
                failures.append(f"{path}: the Tile IR does not parse/verify in tesserac-opt:\n{opt.stderr}")
                continue
            piped = subprocess.run([tesserac_opt, "-", "--default-pipeline"], input=ir.stdout, capture_output=True,
                                   text=True, env=env)
            if piped.returncode != 0:
                failures.append(f"{path}: tesserac-opt --default-pipeline fails on the Tile IR:\n{piped.stderr}")
                continue
            lowered += 1
    for failure in failures:
        print(failure)
    print(f"lowered {lowered} files with kernels to verified Tile IR and ran the default pipeline; "
          f"{len(failures)} failed")
    return 1 if failures or lowered == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
