#!/usr/bin/env python3
"""Fails unless every fenced code block of every seed document is kept,
verbatim, in some test under tests/conformance/seeds/.

usage: check_seed_blocks.py SEEDS_DIR SEED_TESTS_DIR
Exits 77 (skipped) when SEEDS_DIR does not exist.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
from seed_blocks import seed_blocks  # noqa: E402


def main():
    seeds_dir, tests_dir = sys.argv[1:]
    if not os.path.isdir(seeds_dir):
        print(f"seed documents not found at {seeds_dir}: skipped")
        return 77
    tests = []
    for name in sorted(os.listdir(tests_dir)):
        if name.endswith(".tsr"):
            with open(os.path.join(tests_dir, name), encoding="utf-8") as f:
                tests.append(f.read())
    missing = 0
    count = 0
    for seed, number, language, code in seed_blocks(seeds_dir):
        count += 1
        if not any(code in test for test in tests):
            missing += 1
            print(f"{seed}: code block {number} ({language}) has no test in {tests_dir}")
    print(f"seed code blocks: {count - missing} of {count} kept as tests")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
