# REQUIRES: numpy, ptxas
# RUN: %numpy-python %s --tesserac %tesserac --stdlib %S/../../stdlib --workdir %t | FileCheck %s
# Every kernel of stdlib/*.tsr, in each instantiation the tests run (dtype
# aliases, HEAD_DIM), assembles with ptxas for sm_80 and sm_90 (gemm.tsr
# also for sm_90a with --mma=wgmma) with 0 bytes of spill stores and loads.
# Prints registers, stack frame and spills per kernel (docs/stdlib.md's
# table is this output on sm_90). Not gemm_cpu.tsr: the CPU target's form,
# which graph code launches only in code for the CPU alone; on a GPU its
# accumulators live in local memory (docs/stdlib.md).
# CHECK: gemm.tsr T=f32 T16=f16 sm_90 gemm registers
# CHECK: gemm.tsr T=f32 T16=f16 sm_90a+wgmma gemm_tc registers
# CHECK: attention.tsr T=f32 HEAD_DIM=128 sm_90 flash_attention registers
# CHECK: no spills in {{[0-9]+}} kernels
import re
import subprocess
import sys, os
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "Inputs"))
import argparse

parser = argparse.ArgumentParser()
parser.add_argument("--tesserac", required=True)
parser.add_argument("--stdlib", required=True)
parser.add_argument("--workdir", required=True)
args = parser.parse_args()
os.makedirs(args.workdir, exist_ok=True)
from stdlib_check import Harness

INSTANCES = [
    ("gemm.tsr", {"T": "f32", "T16": "f16"}), ("gemm.tsr", {"T": "bf16", "T16": "bf16"}),
    ("gemm.tsr", {"T": "fp8_e4m3 @accum(f32)", "T16": "f16"}),
    ("softmax.tsr", {"T": "f32"}), ("softmax.tsr", {"T": "bf16"}),
    ("norm.tsr", {"T": "f32"}), ("norm.tsr", {"T": "bf16"}),
    ("reduce.tsr", {"T": "f32"}), ("reduce.tsr", {"T": "bf16"}),
    ("attention.tsr", {"T": "f32", "HEAD_DIM": "64"}), ("attention.tsr", {"T": "f32", "HEAD_DIM": "128"}),
    ("attention.tsr", {"T": "bf16", "HEAD_DIM": "64"}),
]
spills, kernels = [], 0
for file, aliases in INSTANCES:
    source = Harness.instantiate(open(os.path.join(args.stdlib, file)).read(), aliases)
    tag = " ".join(f"{k}={v.split()[0]}" for k, v in aliases.items())
    path = os.path.join(args.workdir, re.sub(r"[^A-Za-z0-9_.=-]", "", f"{file}-{tag}.tsr").replace("=", "-"))
    open(path, "w").write(source)
    targets = [("sm_80", []), ("sm_90", [])] + ([("sm_90a+wgmma", ["--mma=wgmma"])] if file == "gemm.tsr" else [])
    for arch, extra in targets:
        done = subprocess.run([args.tesserac, "--emit=cubin", f"-arch={arch.split('+')[0]}", *extra,
                               "--ptxas-options=-v", path, "-o", path + ".cubin"], capture_output=True, text=True)
        if done.returncode != 0:
            print(f"{file} {tag} {arch}: tesserac failed\n{done.stdout}{done.stderr}")
            sys.exit(1)
        for name, body in re.findall(r"Compiling entry function '(\w+)' for '\w+'\n(.*?)(?=Compiling entry|\Z)",
                                     done.stderr + done.stdout, re.S):
            frame, stores, loads = map(int, re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, "
                                                      r"(\d+) bytes spill loads", body).groups())
            registers = int(re.search(r"Used (\d+) registers", body).group(1))
            kernels += 1
            print(f"{file} {tag} {arch} {name} registers {registers} stack {frame} spill stores {stores} loads {loads}")
            if stores or loads:
                spills.append(f"{file} {tag} {arch} {name}")
if spills:
    print("spills in:", *spills, sep="\n  ")
    sys.exit(1)
print(f"no spills in {kernels} kernels")
