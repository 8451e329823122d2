#!/usr/bin/env python3
"""Starts N copies of a command at once and waits for all of them.

usage: parallel_runs.py N LOG COMMAND...

Copy i writes its standard output and error to LOG.i. Fails when any copy
fails (its log is printed).
"""
import subprocess
import sys


def main() -> int:
    count, log = int(sys.argv[1]), sys.argv[2]
    command = sys.argv[3:]
    processes = []
    for i in range(count):
        out = open(f"{log}.{i}", "w", encoding="utf-8")
        processes.append((subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT), out, i))
    failed = 0
    for process, out, i in processes:
        code = process.wait()
        out.close()
        if code != 0:
            failed += 1
            with open(f"{log}.{i}", encoding="utf-8") as f:
                print(f"copy {i} exited with {code}:\n{f.read()}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
