#!/usr/bin/env python3
"""Fenced code blocks of the seed documents (../shared/seeds), shared by the
seed-test generator and the coverage check."""
import os
import re
import textwrap

FENCE = re.compile(r"^(\s*)```(\w*)\s*$")
CLOSE = re.compile(r"^\s*```\s*$")


def seed_blocks(seeds_dir):
    """Yields (seed_file, block_number, language, code) for every fenced block."""
    for name in sorted(os.listdir(seeds_dir)):
        with open(os.path.join(seeds_dir, name), encoding="utf-8") as f:
            lines = f.read().split("\n")
        i, number = 0, 0
        while i < len(lines):
            m = FENCE.match(lines[i])
            if not m:
                i += 1
                continue
            j, body = i + 1, []
            while j < len(lines) and not CLOSE.match(lines[j]):
                body.append(lines[j])
                j += 1
            number += 1
            code = textwrap.dedent("\n".join(body)).rstrip("\n") + "\n"
            yield name, number, m.group(2) or "text", code
            i = j + 1
