#!/usr/bin/env python3
"""Fails unless every registered diagnostic kind was emitted by some test.

usage: check_diagnostic_coverage.py TESSERAC DIAGNOSTIC_LOG

TESSERAC --list-diagnostics prints the registry; the log holds the id of every
diagnostic the lit run emitted (one per line, written by tesserac when
TESSERA_DIAGNOSTIC_LOG is set).
"""
import subprocess
import sys

# Kinds that no file test can provoke, with the reason; keep this list short.
EXEMPT: dict[str, str] = {}


def main() -> int:
    tesserac, log_path = sys.argv[1:]
    listing = subprocess.run([tesserac, "--list-diagnostics"], check=True, capture_output=True, text=True).stdout
    registered = [line.split()[0] for line in listing.splitlines() if line.strip()]
    try:
        with open(log_path, encoding="utf-8") as log:
            seen = {line.strip() for line in log if line.strip()}
    except FileNotFoundError:
        seen = set()
    missing = [kind for kind in registered if kind not in seen and kind not in EXEMPT]
    for kind in missing:
        print(f"diagnostic kind never exercised by a test: {kind}")
    tested = len(registered) - len(missing)
    print(f"diagnostic kinds: {tested} of {len(registered)} exercised ({len(EXEMPT)} exempt)")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
