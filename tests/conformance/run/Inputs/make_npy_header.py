#!/usr/bin/env python3
"""make_npy_header.py OUT.npy DESCR SHAPE: writes a .npy file holding only a
header (no data) claiming DESCR ('<f4') and SHAPE (comma-separated extents,
any size): hand-made bad input for the .npy reader."""
import sys

out, descr, shape = sys.argv[1:4]
extents = shape.split(",")
text = "(" + ", ".join(extents) + ("," if len(extents) == 1 else "") + ")"
header = f"{{'descr': '{descr}', 'fortran_order': False, 'shape': {text}, }}"
header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
with open(out, "wb") as f:
    f.write(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header.encode("latin1"))
