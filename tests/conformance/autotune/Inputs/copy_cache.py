#!/usr/bin/env python3
"""Copies the one tuning cache file of a directory (docs/autotuning.md).

usage: copy_cache.py DIR OUT [--choose "KERNEL=POINT" ...]

Writes DIR's cache file to OUT. With --choose, first sets the choice of every
entry of KERNEL to POINT in the cache file itself (as if tuning had chosen
it), so that a test can make a run use a point other than the fastest.
"""
import argparse
import json
import os
import shutil
import sys


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("directory")
    parser.add_argument("out")
    parser.add_argument("--choose", action="append", default=[])
    args = parser.parse_args()
    caches = [n for n in sorted(os.listdir(args.directory)) if n.endswith(".json")]
    if len(caches) != 1:
        print(f"expected one cache file in {args.directory}, found {caches}")
        return 1
    path = os.path.join(args.directory, caches[0])
    if args.choose:
        with open(path, encoding="utf-8") as f:
            cache = json.load(f)
        for choice in args.choose:
            kernel, point = choice.split("=", 1)
            for entry in cache["entries"]:
                if entry["kernel"] == kernel:
                    entry["choice"] = point
        with open(path, "w", encoding="utf-8") as f:
            json.dump(cache, f, indent=2, sort_keys=True)
    shutil.copyfile(path, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
