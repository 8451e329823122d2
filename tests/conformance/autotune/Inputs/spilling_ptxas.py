#!/usr/bin/env python3
"""A ptxas that reports spills it did not have: runs the real ptxas
($REAL_PTXAS) with the same arguments and standard input, then, in its -v
report, gives every entry whose name contains $SPILLING_ENTRY 64 bytes of
spill stores. Tests the driver's pruning of points that no real kernel of
the stdlib spills (spill-prune-stdlib-gemm.tsr)."""
import os
import re
import subprocess
import sys

result = subprocess.run([os.environ["REAL_PTXAS"], *sys.argv[1:]], capture_output=True, text=True)
marker = os.environ["SPILLING_ENTRY"]
for name, stream in (("stdout", sys.stdout), ("stderr", sys.stderr)):
    spilling = False
    for line in getattr(result, name).splitlines(keepends=True):
        if "Compiling entry function" in line or "Function properties for" in line:
            spilling = marker in line
        if spilling:
            line = re.sub(r"\b0 bytes spill stores", "64 bytes spill stores", line)
        stream.write(line)
sys.exit(result.returncode)
