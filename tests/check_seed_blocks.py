#!/usr/bin/env python3
"""Fails unless every fenced code block of every seed document is kept,
verbatim, as a test under tests/conformance/seeds/.

usage: check_seed_blocks.py SEEDS_DIR SEED_TESTS_DIR

Block N of seed document NNN_<hash>.txt must be kept in exactly one file
SEED_TESTS_DIR/NNN-<NN>-<slug>.tsr (N as two digits), which
  - holds the block's code verbatim, as whole lines (dedented when the fence
    is indented inside a list item; a block the document never closes runs to
    the end of the document),
  - names the seed document in its comments, and
  - has at least one RUN line.
A file named like a seed test that matches no block (a block that was
removed or renumbered) is an error too. Other files in SEED_TESTS_DIR
(examples.tsr, README.md, subdirectories) are ignored.

Exits 0 when all is well, 1 listing every problem otherwise, and 77 (ctest's
SKIP_RETURN_CODE) when SEEDS_DIR does not exist or holds no seed document:
the seeds live beside the checkout (../shared/seeds), not in it.
"""
import os
import re
import sys
import textwrap

FENCE_OPEN = re.compile(r"^(\s*)```\s*([\w+-]*)\s*$")
FENCE_CLOSE = re.compile(r"^\s*```\s*$")
SEED_NAME = re.compile(r"^(\d{3})_\w+\.txt$")
TEST_NAME = re.compile(r"^(\d{3})-(\d{2,})-[a-z0-9]+(?:-[a-z0-9]+)*\.tsr$")
SKIP = 77


def read_text(path):
    # Universal newlines: a CRLF checkout compares like an LF one.
    with open(path, encoding="utf-8") as f:
        return f.read()


def fenced_blocks(text):
    """Yields (number, language, first_line, closed, code) for every fenced block."""
    lines = text.split("\n")
    i, number = 0, 0
    while i < len(lines):
        m = FENCE_OPEN.match(lines[i])
        if not m:
            i += 1
            continue
        j = i + 1
        while j < len(lines) and not FENCE_CLOSE.match(lines[j]):
            j += 1
        number += 1
        body = textwrap.dedent("\n".join(lines[i + 1:j])).rstrip("\n") + "\n"
        yield number, m.group(2) or "untagged", i + 1, j < len(lines), body
        i = j + 1


def main(argv):
    if len(argv) != 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    seeds_dir, tests_dir = argv[1], argv[2]
    if not os.path.isdir(seeds_dir):
        print(f"seed documents not found at {seeds_dir}: skipped")
        return SKIP
    seeds = sorted(n for n in os.listdir(seeds_dir) if SEED_NAME.match(n))
    if not seeds:
        print(f"no seed documents (NNN_<hash>.txt) in {seeds_dir}: skipped")
        return SKIP
    if not os.path.isdir(tests_dir):
        print(f"error: seed test directory {tests_dir} does not exist")
        return 1

    tests = {}  # (seed number, block number) -> [file names]
    texts = {}
    for name in sorted(os.listdir(tests_dir)):
        m = TEST_NAME.match(name)
        if m and os.path.isfile(os.path.join(tests_dir, name)):
            tests.setdefault((m.group(1), int(m.group(2))), []).append(name)
            texts[name] = "\n" + read_text(os.path.join(tests_dir, name))

    problems = []
    blocks = 0
    seen = set()
    failing = set()
    for seed in seeds:
        number_prefix = SEED_NAME.match(seed).group(1)
        for number, language, line, closed, code in fenced_blocks(read_text(os.path.join(seeds_dir, seed))):
            blocks += 1
            key = (number_prefix, number)
            seen.add(key)
            before = len(problems)
            where = f"{seed}: code block {number} ({language}, line {line}{'' if closed else ', never closed'})"
            names = tests.get(key, [])
            expected_name = f"{number_prefix}-{number:02d}-<slug>.tsr"
            if not names:
                elsewhere = [n for n, t in texts.items() if "\n" + code in t]
                hint = f" (its code is in {', '.join(elsewhere)})" if elsewhere else ""
                problems.append(f"{where}: no test {expected_name} in {tests_dir}{hint}")
                failing.add(key)
                continue
            if len(names) > 1:
                problems.append(f"{where}: several tests claim it: {', '.join(names)}")
                failing.add(key)
                continue
            name = names[0]
            text = texts[name]
            if "\n" + code not in text:
                problems.append(f"{where}: {name} does not hold the block's code verbatim (as whole lines)")
            comments = "\n".join(l for l in text.split("\n") if l.lstrip().startswith("#"))
            if seed not in comments:
                problems.append(f"{where}: {name} does not name the seed document {seed} in its comments")
            if not re.search(r"^\s*#\s*RUN:", text, re.M):
                problems.append(f"{where}: {name} has no RUN line")
            if len(problems) > before:
                failing.add(key)

    for key, names in sorted(tests.items()):
        if key not in seen:
            for name in names:
                problems.append(f"{name}: no seed code block {key[1]} in a seed document {key[0]}_*.txt (stale test?)")

    for p in problems:
        print(f"error: {p}")
    print(f"seed code blocks: {blocks - len(failing)} of {blocks} kept as tests in {tests_dir}"
          + (f"; {len(problems)} problem(s)" if problems else ""))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
