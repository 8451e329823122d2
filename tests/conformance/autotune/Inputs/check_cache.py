#!/usr/bin/env python3
"""Checks a tuning cache directory (docs/autotuning.md, "The cache").

usage: check_cache.py DIR EXPECTED_ENTRIES   (or a .json file instead of DIR)

Fails unless DIR holds exactly one cache file (plus its lock file and no
temporary file left behind), valid JSON in the documented format, with
EXPECTED_ENTRIES entries each choosing one of its timed variants; prints
them one a line, sorted.
"""
import json
import os
import sys


def main() -> int:
    where, expected = sys.argv[1], int(sys.argv[2])
    if os.path.isdir(where):
        names = sorted(os.listdir(where))
        caches = [n for n in names if n.endswith(".json")]
        leftovers = [n for n in names if ".tmp." in n]
        if len(caches) != 1 or leftovers:
            print(f"expected one cache file and no temporary files in {where}, found {names}")
            return 1
        path = os.path.join(where, caches[0])
    else:
        path = where
    with open(path, encoding="utf-8") as f:
        cache = json.load(f)
    if cache.get("format") != "tessera-tuning-cache" or cache.get("version") != 1:
        print(f"{path}: not a version 1 tuning cache")
        return 1
    entries = cache["entries"]
    print(f"entries: {len(entries)}")
    for e in sorted(entries, key=lambda e: (e["kernel"], e["key"])):
        if e["choice"] not in e["median_ms"]:
            print(f"{e['kernel']}: the choice {e['choice']} was not timed")
            return 1
        print(f"{e['kernel']} {e['key']}: {e['choice']} of {len(e['median_ms'])} timed")
    return 0 if len(entries) == expected else 1


if __name__ == "__main__":
    sys.exit(main())
