#!/usr/bin/env python3
"""Every kernel the NVPTX backend supports assembles with ptxas, without spills.

For each .tsr file under the given directories that lowers to Tile IR
(`tesserac --emit=tile-ir` succeeds and holds a function), compiles PTX for
sm_80, sm_90, sm_90a and sm_100 and runs `ptxas -v`: it must succeed and
report 0 bytes of spill stores and loads for every kernel. Files whose
kernels use an operation the backend does not support yet
(codegen.unsupported) are listed, not failed, and so are the spills of the
files in CPU_FORMS (kernels written for the CPU target, which graph code
launches only in code for the CPU alone: they must assemble, but may
spill). Exits 77 (skipped) without ptxas.
"""
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

ARCHS = ["sm_80", "sm_90", "sm_90a", "sm_100"]
# stdlib/gemm_cpu.tsr keeps 128 accumulators per lane, registers on the CPU
# and local memory on a GPU (docs/stdlib.md, "gemm_cpu.tsr").
CPU_FORMS = {"gemm_cpu.tsr"}


def main() -> int:
    tesserac, *directories = sys.argv[1:]
    ptxas = os.environ.get("TESSERA_PTXAS") or shutil.which("ptxas") or "/usr/local/cuda/bin/ptxas"
    if not os.path.exists(ptxas):
        print("ptxas not found: skipped")
        return 77
    failures, assembled, unsupported, cpu_form_spills = [], 0, [], []
    with tempfile.TemporaryDirectory() as scratch:
        for directory in directories:
            for path in sorted(pathlib.Path(directory).glob("*.tsr")):
                if "kernel" not in path.read_text(encoding="utf-8", errors="replace"):
                    continue
                ir = subprocess.run([tesserac, "--emit=tile-ir", "-w", str(path)], capture_output=True, text=True)
                if ir.returncode != 0 or "func.func" not in ir.stdout:
                    continue
                for arch in ARCHS:
                    ptx_file = os.path.join(scratch, "k.ptx")
                    ptx = subprocess.run([tesserac, "--emit=ptx", "-w", f"-arch={arch}", str(path), "-o", ptx_file],
                                         capture_output=True, text=True)
                    if ptx.returncode != 0:
                        if "codegen.unsupported" in ptx.stderr or "codegen.no-libdevice" in ptx.stderr:
                            unsupported.append(f"{path.name}: {ptx.stderr.strip().splitlines()[0]}")
                            break
                        failures.append(f"{path} ({arch}): tesserac --emit=ptx failed:\n{ptx.stderr}")
                        continue
                    run = subprocess.run([ptxas, "-v", f"-arch={arch}", ptx_file, "-o", os.path.join(scratch, "k.cubin")],
                                         capture_output=True, text=True)
                    if run.returncode != 0:
                        failures.append(f"{path} ({arch}): ptxas failed:\n{run.stderr}")
                        continue
                    for stores, loads in re.findall(r"(\d+) bytes spill stores, (\d+) bytes spill loads", run.stderr):
                        if stores != "0" or loads != "0":
                            spill = f"{path} ({arch}): spills ({stores} bytes stored, {loads} loaded)"
                            (cpu_form_spills if path.name in CPU_FORMS else failures).append(spill)
                    assembled += 1
    for line in unsupported:
        print("not supported yet:", line)
    for line in cpu_form_spills:
        print("a CPU form, allowed:", line)
    for failure in failures:
        print(failure)
    print(f"assembled {assembled} (file, arch) pairs with ptxas, {len(unsupported)} files not supported yet, "
          f"{len(failures)} failures")
    return 1 if failures or assembled == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
