#!/usr/bin/env python3
"""Regenerates tests/conformance/seeds/ from the seed documents.

usage: scripts/update_seed_tests.py TESSERAC [SEEDS_DIR]

Every fenced code block becomes one test file holding the block verbatim.
Blocks that check cleanly get `-fsyntax-only` and a typed-AST check of their
functions; the others get `-verify` with the diagnostics tesserac reports
today, written as `expected-*@LINE` directives above the code. Review the
diff after running it: the expectations are what the compiler says now.
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from seed_blocks import seed_blocks  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests", "conformance", "seeds")
DIAG = re.compile(r"^(?:[^:]+):(\d+):\d+: (error|warning|note): (.*) \[[^\]]+\]$")


def slug(code):
    m = re.search(r"def (\w+)", code) or re.search(r"^(\w+)\s*=", code, re.M)
    return (m.group(1) if m else "fragment").replace("_", "-").lower()


def main():
    tesserac = sys.argv[1]
    seeds = sys.argv[2] if len(sys.argv) > 2 else os.path.join(ROOT, "..", "shared", "seeds")
    for old in os.listdir(OUT):
        if old.endswith(".tsr") and old[0].isdigit():
            os.remove(os.path.join(OUT, old))
    for seed, number, language, code in seed_blocks(seeds):
        name = f"{seed[:3]}-{number:02d}-{slug(code)}.tsr"
        path = os.path.join(OUT, name)
        with open(path, "w", encoding="utf-8") as f:
            f.write(code)
        result = subprocess.run([tesserac, "-fsyntax-only", "-ferror-limit=0", path], capture_output=True, text=True)
        diagnostics = [DIAG.match(line) for line in result.stderr.splitlines()]
        diagnostics = [d for d in diagnostics if d]
        header = [f"# Seed {seed}, code block {number} ({language}), kept verbatim below the comments."]
        functions = re.findall(r"^def (\w+)", code, re.M)
        if not diagnostics:
            header.append("# RUN: %tesserac -fsyntax-only %s")
            if functions:
                header.append("# RUN: %tesserac --emit=typed-ast %s | FileCheck %s")
                header += [f"# CHECK: FunctionDef {fn} " for fn in functions]
        else:
            if any(d.group(2) == "error" for d in diagnostics):
                header.append("# Not a complete Tessera program: the diagnostics below are what it gets.")
            else:
                header.append("# Compiles, with the warnings below (ones the language brief asks for).")
            header.append("# RUN: %tesserac -verify %s")
            offset = len(header) + len(diagnostics)
            for d in diagnostics:
                line, severity, message = int(d.group(1)), d.group(2), d.group(3)
                message = message.replace("{{", "{ {").replace("}}", "} }")
                header.append(f"# expected-{severity}@{line + offset} {{{{{message}}}}}")
        with open(path, "w", encoding="utf-8") as f:
            f.write("\n".join(header) + "\n" + code)
        print(f"{name}: {'ok' if not diagnostics else str(len(diagnostics)) + ' diagnostics'}")


if __name__ == "__main__":
    main()
