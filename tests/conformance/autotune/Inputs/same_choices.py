#!/usr/bin/env python3
"""Checks that two ranks' tuning caches hold the same entries (docs/autotuning.md,
"Distributed jobs"): the same keys, choices and medians (rank 0 timed, the
other rank recorded what rank 0 broadcast).

usage: same_choices.py DIR0 DIR1
"""
import json
import os
import sys


def entries(directory):
    caches = [n for n in sorted(os.listdir(directory)) if n.endswith(".json")]
    if len(caches) != 1:
        sys.exit(f"expected one cache file in {directory}, found {caches}")
    with open(os.path.join(directory, caches[0]), encoding="utf-8") as f:
        cache = json.load(f)
    return {(e["kernel"], e["key"]): e for e in cache["entries"]}


def main() -> int:
    first, second = entries(sys.argv[1]), entries(sys.argv[2])
    if first.keys() != second.keys():
        print(f"different keys: {sorted(first)} and {sorted(second)}")
        return 1
    for (kernel, key), e in sorted(first.items()):
        other = second[(kernel, key)]
        if e["choice"] != other["choice"] or e["median_ms"] != other["median_ms"]:
            print(f"{kernel} {key}: {e['choice']} {e['median_ms']} and {other['choice']} {other['median_ms']}")
            return 1
        print(f"{kernel} {key}: {e['choice']} on both ranks, {len(e['median_ms'])} medians equal")
    return 0


if __name__ == "__main__":
    sys.exit(main())
