#!/usr/bin/env python3
"""Writes what tesserac makes of every .tsr under tests/ and examples/ into a
folder, so that two compilers (before and after a refactoring) can be
compared byte for byte:

    scripts/snapshot-outputs.py --tesserac build/ci/tools/tesserac --out /tmp/before
    ... change the compiler, rebuild ...
    scripts/snapshot-outputs.py --tesserac build/ci/tools/tesserac --out /tmp/after
    diff -r /tmp/before /tmp/after

For each file that `tesserac FILE` accepts it records the Tile IR, the
optimised NVPTX LLVM IR, the PTX for sm_80 and sm_90a, the CPU target's LLVM
IR and the AOT header of `-c --gpu-code=ptx`; for the others, the
diagnostics. Outputs that fail are recorded with their exit code and
standard error, so a change in what fails shows up too. --stdlib-dir sets
TESSERA_STDLIB_DIR, so that each compiler launches the stdlib instances it
built itself (scripts/compare-outputs.sh)."""
import argparse
import concurrent.futures
import os
import pathlib
import subprocess
import sys
import tempfile

FORMS = [
    ("tile-ir", ["--emit=tile-ir"]),
    ("llvm-sm80", ["--emit=llvm", "-arch=sm_80"]),
    ("ptx-sm80", ["--emit=ptx", "-arch=sm_80"]),
    ("ptx-sm90a", ["--emit=ptx", "-arch=sm_90a"]),
    ("cpu-llvm", ["--target=cpu", "--emit=llvm"]),
]


ENV = dict(os.environ)


def run(cmd, cwd=None):
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd, timeout=300, env=ENV)
    return proc.returncode, proc.stdout, proc.stderr


def snapshot(tesserac, root, source, out_dir):
    rel = source.relative_to(root)
    dest = out_dir / rel
    dest.mkdir(parents=True, exist_ok=True)
    code, _, err = run([tesserac, str(rel)], cwd=root)
    (dest / "check.txt").write_bytes(b"exit %d\n" % code + err)
    if code != 0:
        return
    for name, args in FORMS:
        code, out, err = run([tesserac, *args, str(rel), "-o", "-"], cwd=root)
        (dest / name).write_bytes(b"exit %d\n" % code + out + b"\n--- stderr\n" + err)
    with tempfile.TemporaryDirectory() as tmp:
        obj = os.path.join(tmp, "k.o")
        code, _, err = run([tesserac, "-c", "--gpu-code=ptx", "--namespace=k", str(rel), "-o", obj], cwd=root)
        header = pathlib.Path(tmp, "k.h")
        text = header.read_bytes() if header.exists() else b""
        (dest / "aot-header").write_bytes(b"exit %d\n" % code + text + b"\n--- stderr\n" + err)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tesserac", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--stdlib-dir", help="the stdlib instances to use (TESSERA_STDLIB_DIR)")
    args = parser.parse_args()
    if args.stdlib_dir:
        ENV["TESSERA_STDLIB_DIR"] = os.path.abspath(args.stdlib_dir)
    root = pathlib.Path(__file__).resolve().parent.parent
    tesserac = os.path.abspath(args.tesserac)
    out_dir = pathlib.Path(args.out)
    sources = sorted(p for d in ("tests", "examples") for p in (root / d).rglob("*.tsr"))
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for future in [pool.submit(snapshot, tesserac, root, s, out_dir) for s in sources]:
            future.result()
    print(f"snapshot-outputs: {len(sources)} files into {out_dir}")


if __name__ == "__main__":
    sys.exit(main())
