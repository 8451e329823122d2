# REQUIRES: numpy
# RUN: env TESSERA_EXEC_MMA=sync %numpy-python %s --tesserac %tesserac --stdlib %S/../../stdlib --workdir %t | FileCheck %s
# gemm-tc.py's cases on the GPU's mma.sync path (ldmatrix + mma.sync
# m16n8k16), each instruction emulated on the CPU by the warp's lanes
# exchanging fragments (docs/codegen.md, "Tensor cores"): checks the
# fragment addressing of the swizzled, double-buffered stages, edge tiles
# included.
# CHECK-COUNT-8: C: ok
import sys, os
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "Inputs"))
from gemm_tc_cases import main
main()
