#!/usr/bin/env python3
"""What the checker accepts compiles for every target (issue 17).

Every .tsr file under the given directories that `tesserac FILE` accepts
(exit 0) must also compile with `--emit=ptx` for sm_80 and sm_90 and with
`--target=cpu --emit=llvm`, each giving output. Anything else is a failure
naming the file, the target and the error: an error diagnostic, an internal
compiler error, a crash, a time-out, or exit 0 with empty output.

The one exception is a file that intentionally holds a construct not
compiled yet. Such files are listed in the allow-list (ALLOW_LIST, one
`PATH KIND  # why` a line, PATH relative to the repository root):
  unsupported  every target fails with lower.unsupported, codegen.unsupported
               or ir.autodiff-unsupported (a derivative not computed yet), and
               no other error;
  empty        every target exits 0 with empty output (a file with @jit functions that
               gives no code at all: lowering skips @jit functions today).
  rejected     every target fails with errors of lowering (lower.*, no
               internal error): a program the checker accepts but lowering
               rejects, a disagreement to be fixed in sema (issue 17).
A listed file that compiles is a failure too (remove it from the list), and
so is an unsupported or empty result of a file that is not listed: the list
says exactly which files are not compiled yet. Files whose PTX needs
libdevice when it is not installed (codegen.no-libdevice) are counted apart.

usage: check_every_target.py TESSERAC REPOSITORY_ROOT ALLOW_LIST DIRECTORY...
Exits 0 when everything compiles as expected, 1 otherwise.
"""
import concurrent.futures
import os
import pathlib
import re
import subprocess
import sys
import time

TARGETS = {
    "ptx sm_80": ["--emit=ptx", "-arch=sm_80"],
    "ptx sm_90": ["--emit=ptx", "-arch=sm_90"],
    "cpu llvm": ["--target=cpu", "--emit=llvm"],
}
UNSUPPORTED_KINDS = {"lower.unsupported", "codegen.unsupported", "ir.autodiff-unsupported"}
TIMEOUT_SECONDS = 120
KIND = re.compile(r"^\S.*?: error: .*\[([a-z0-9.-]+)\]$", re.M)


def run(command):
    """(exit code, stdout, stderr); a time-out is exit code None."""
    try:
        result = subprocess.run(command, capture_output=True, text=True, errors="replace", timeout=TIMEOUT_SECONDS)
    except subprocess.TimeoutExpired:
        return None, "", f"timed out after {TIMEOUT_SECONDS} s"
    return result.returncode, result.stdout, result.stderr


# Code in an output: a PTX function or an LLVM IR definition.
CODE = re.compile(r"^\s*(\.visible\s+|\.weak\s+)?\.(entry|func)\b|^define\b", re.M)
JIT = re.compile(r"^\s*@(ts\.)?jit\b", re.M)


def classify(code, stdout, stderr, has_jit):
    """ok, empty, unsupported, no-libdevice, or ('error', why)."""
    if code is None:
        return "error", stderr
    if code < 0:
        return "error", f"killed by signal {-code}\n{stderr}"
    if "internal compiler error" in stderr or code == 3:
        return "error", f"internal compiler error (exit {code})\n{stderr}"
    if code == 0:
        if not stdout.strip():
            return "error", "exit 0 with empty output"
        # A module of @jit functions that compiles to no code: lowering
        # skips them silently (to be listed as `empty` until it does not).
        if has_jit and not CODE.search(stdout):
            return "empty", "exit 0 without code for its @jit functions"
        return "ok", ""
    kinds = set(KIND.findall(stderr))
    if code == 1 and kinds and kinds <= UNSUPPORTED_KINDS:
        return "unsupported", stderr.strip().splitlines()[0]
    if code == 1 and kinds and all(k.startswith("lower.") for k in kinds):
        return "rejected", stderr.strip().splitlines()[0]
    if code == 1 and kinds == {"codegen.no-libdevice"}:
        return "no-libdevice", ""
    return "error", f"exit {code}\n{stderr}"


def check_file(tesserac, path):
    """(path, {target: (status, detail)}) or (path, None) when the checker rejects it."""
    code, _, _ = run([tesserac, "-w", str(path)])
    if code != 0:
        return path, None
    has_jit = bool(JIT.search(path.read_text(encoding="utf-8", errors="replace")))
    results = {}
    for target, flags in TARGETS.items():
        results[target] = classify(*run([tesserac, "-w", *flags, str(path)]), has_jit)
    return path, results


def read_allow_list(path):
    allowed = {}
    for number, line in enumerate(pathlib.Path(path).read_text(encoding="utf-8").splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        fields = line.split()
        if len(fields) != 2 or fields[1] not in ("unsupported", "empty", "rejected"):
            sys.exit(f"{path}:{number}: expected 'PATH unsupported|empty|rejected', got '{line}'")
        allowed[fields[0]] = fields[1]
    return allowed


def main() -> int:
    tesserac, root, allow_list, *directories = sys.argv[1:]
    root = pathlib.Path(root).resolve()
    allowed = read_allow_list(allow_list)
    files = sorted({p.resolve() for d in directories for p in pathlib.Path(d).rglob("*.tsr")})
    start = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        outcomes = list(pool.map(lambda p: check_file(tesserac, p), files))

    failures, not_compiled, no_libdevice = [], [], []
    accepted = compiled = 0
    seen_listed = set()
    for path, results in outcomes:
        name = str(path.relative_to(root)) if path.is_relative_to(root) else str(path)
        if results is None:
            continue
        accepted += 1
        statuses = {status for status, _ in results.values()}
        expected = allowed.get(name)
        if expected:
            seen_listed.add(name)
        errors = [f"{name} ({target}): {detail}" for target, (status, detail) in results.items() if status == "error"]
        if errors:
            failures.extend(errors)
            continue
        if statuses == {"no-libdevice"} or statuses == {"ok", "no-libdevice"}:
            no_libdevice.append(name)
            if statuses == {"ok", "no-libdevice"}:
                compiled += 1
            continue
        if expected is None:
            if statuses == {"ok"}:
                compiled += 1
                continue
            bad = [(target, detail) for target, (status, detail) in results.items() if status != "ok"]
            failures.append(f"{name} ({', '.join(t for t, _ in bad)}): {bad[0][1]} (a file not compiled yet must be "
                            f"listed in {pathlib.Path(allow_list).name})")
            continue
        if statuses == {expected}:
            detail = next(iter(results.values()))[1]
            not_compiled.append(f"{name}: {expected}: {detail}")
            continue
        if statuses == {"ok"}:
            failures.append(f"{name}: compiles for every target now; remove it from {pathlib.Path(allow_list).name}")
            continue
        failures.append(f"{name}: listed as '{expected}' but gives " +
                        ", ".join(f"{target}: {status}" for target, (status, _) in results.items()))
    for name in sorted(set(allowed) - seen_listed):
        failures.append(f"{name}: listed in {pathlib.Path(allow_list).name} but not found or not accepted by the checker")

    for line in not_compiled:
        print("not compiled yet:", line)
    for name in no_libdevice:
        print("needs libdevice (not installed), PTX not checked:", name)
    for failure in failures:
        print("FAIL:", failure)
    print(f"{len(files)} files, {accepted} accepted by the checker: {compiled} compile for "
          f"{', '.join(TARGETS)}; {len(not_compiled)} not compiled yet (listed); {len(no_libdevice)} need libdevice; "
          f"{len(failures)} failures; {time.monotonic() - start:.1f} s")
    return 1 if failures or compiled == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
