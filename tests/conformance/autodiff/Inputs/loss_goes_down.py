#!/usr/bin/env python3
"""Reads a training program's output: lines "<label> loss <number>" (the
first and last count). Checks that the last loss is below `--ratio` times
the first and prints "loss went down: FIRST -> LAST", else exits 1."""
import argparse
import re
import sys

parser = argparse.ArgumentParser()
parser.add_argument("--ratio", type=float, default=0.5)
parser.add_argument("output")
options = parser.parse_args()
losses = [float(m.group(1)) for m in re.finditer(r"loss\s+([-+0-9.eEinfa]+)", open(options.output).read())]
if len(losses) < 2:
    sys.exit(f"expected at least two loss lines, got {len(losses)}")
first, last = losses[0], losses[-1]
if not last < options.ratio * first:
    sys.exit(f"the loss did not go down enough: {first} -> {last} (wanted below {options.ratio} x {first})")
print(f"loss went down: {first:.4g} -> {last:.4g}")
