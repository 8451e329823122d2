#!/usr/bin/env python3
"""Runs the frontend fuzzer briefly: the given corpus directories as seeds, a
bounded number of runs with a fixed random seed (the same mutations every
time, so CI is repeatable) and a time limit, fresh scratch output each time.

usage: run_fuzz_smoke.py FUZZER SCRATCH_DIR CORPUS_DIR...
"""
import os
import shutil
import subprocess
import sys


def main():
    fuzzer, scratch, *corpora = sys.argv[1:]
    shutil.rmtree(scratch, ignore_errors=True)
    # -timeout: a hang, not a slow input. The seeds include the stdlib and
    # the largest tests, whose whole pipeline under ASan at -O0 took 11 s
    # on the 2-core VM while the rest of the suite ran beside it (2026-11-27).
    command = [fuzzer, "-runs=20000", "-max_total_time=60", "-timeout=60", "-max_len=4096",
               "-seed=1", "-print_final_stats=1", f"-artifact_prefix={scratch}/", scratch, *corpora]
    # libFuzzer writes new inputs into the first corpus directory: the scratch one.
    os.makedirs(scratch, exist_ok=True)
    result = subprocess.run(command, capture_output=True, text=True)
    lines = result.stderr.splitlines()
    # On a failure, the sanitizer's report (from its ERROR line) says what broke.
    start = next((i for i, line in enumerate(lines) if "ERROR:" in line), max(0, len(lines) - 15))
    print("\n".join(lines[start:start + 60]))
    return result.returncode


if __name__ == "__main__":
    sys.exit(main())
