# REQUIRES: numpy
# RUN: %numpy-python %s --tesserac %tesserac --stdlib %S/../../stdlib --workdir %t | FileCheck %s
# stdlib/gemm.tsr, kernel gemm_tc (tensor cores: tile.mma on f16 / bf16
# shared tiles, f32 accumulation), for T16 = f16 and (rewriting the alias
# line) bf16, on the CPU's SIMT path for tile.mma; gemm-tc-mma-sync.py and
# gemm-tc-wgmma.py run the GPU's mma.sync and wgmma paths with each
# instruction emulated (docs/codegen.md, "Tensor cores"). Shapes
# (Inputs/gemm_tc_cases.py): 1 x 1 x 1, K = 1, K not a multiple of 16,
# partial tiles on every side (zero-filled stages, guarded epilogue), whole
# tiles (cp_async, the direct epilogue), a batch, alpha and beta. Products of
# f16 / bf16 values are exact in f32; tolerance 2 (K + 2) u (|alpha| |A| |B|
# + |beta| |C0|), u = 2^-24.
# CHECK-COUNT-8: C: ok
import sys, os
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "Inputs"))
from gemm_tc_cases import main
main()
