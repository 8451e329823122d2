#!/usr/bin/env python3
"""Runs lit on the conformance suite after clearing the diagnostic log.

usage: run_lit.py LOG_FILE LIT_EXECUTABLE [lit arguments...]
"""
import os
import subprocess
import sys


def main() -> int:
    log, lit, *args = sys.argv[1:]
    if os.path.exists(log):
        os.remove(log)
    return subprocess.call([lit, *args])


if __name__ == "__main__":
    sys.exit(main())
