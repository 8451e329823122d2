# REQUIRES: numpy
# RUN: env TESSERA_EXEC_MMA=wgmma %numpy-python %s --tesserac %tesserac --stdlib %S/../../stdlib --workdir %t | FileCheck %s
# gemm-tc.py's cases on the wgmma path (sm_90a with --mma=wgmma: the stage
# buffers are whole XOR-swizzled buffers with rows of 64 and 128 bytes,
# read in place through matrix descriptors chosen at run time), each
# wgmma.mma_async emulated on the CPU by reading its operands through its
# descriptors (docs/codegen.md, "Tensor cores").
# CHECK-COUNT-8: C: ok
import sys, os
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "Inputs"))
from gemm_tc_cases import main
main()
