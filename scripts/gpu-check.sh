#!/usr/bin/env bash
# The checks that need an NVIDIA GPU, in one command (docs/building-and-testing.md,
# "On a GPU"). Without a GPU the suite (scripts/test.sh) checks everything else;
# this runs the same execution tests on the GPU and the tensor-core paths that
# the CPU can only emulate.
#
# usage: scripts/gpu-check.sh [BUILD_DIR]     (default build/release, built)
#
#   1. every execution test and every stdlib test (tests/stdlib/, NumPy
#      references) on cuda:0 (TESSERA_EXEC_DEVICE): mma.sync with
#      ldmatrix where the tests take the tensor-core path, the hardware fp8
#      conversions (narrow-policy-rounding.tsr bit for bit), barriers, atomics;
#   2. on a compute capability 9.0 GPU, the same with TESSERA_EXEC_MMA=wgmma
#      (sm_90a with wgmma where the operands allow it): if it passes, wgmma
#      can become --mma=auto's choice (docs/codegen.md, "Tensor cores");
#   3. the @jit and program tests (tests/conformance/jit/, graph/, autodiff/:
#      host code and generated kernels) on cuda:0;
#   4. the tuner on cuda:0: the @jit tests of tuned launches
#      (tests/conformance/autotune/jit-*), CUDA events, L2 flushed;
#   5. the runtime's unit tests, which use a GPU when one works;
#   6. the NCCL backend on cuda:0 (every collective, one rank).
# Exit status: 0 when every step passed, 1 otherwise; 77 without a GPU.
set -uo pipefail
cd "$(dirname "$0")/.."
build="${1:-build/release}"
lit="${LIT:-$(command -v lit || echo /usr/lib/llvm-22/bin/lit)}"

if [[ ! -x "$build/tools/tesserac" ]]; then
  echo "gpu-check: no $build/tools/tesserac (build it first: cmake --build --preset release)" >&2
  exit 2
fi
capability="$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d ' ')"
if [[ -z "$capability" ]]; then
  echo "gpu-check: skipped: no NVIDIA GPU (nvidia-smi found none)"
  exit 77
fi
echo "gpu-check: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1), compute capability $capability"

failed=0
step() {
  local name="$1"
  shift
  echo "== $name"
  if "$@"; then echo "== $name: passed"; else echo "== $name: FAILED"; failed=1; fi
}
step "execution tests on cuda:0" env TESSERA_EXEC_DEVICE=cuda:0 "$lit" -sv "$build/tests" --filter 'conformance/exec/|stdlib/'
if [[ "$capability" == "9.0" ]]; then
  step "execution tests on cuda:0 with wgmma" \
    env TESSERA_EXEC_DEVICE=cuda:0 TESSERA_EXEC_MMA=wgmma "$lit" -sv "$build/tests" --filter 'conformance/exec/|stdlib/'
else
  echo "== wgmma: skipped (compute capability $capability, not 9.0)"
fi
# @jit functions and programs: host code launching the fatbin's kernels,
# the stdlib's GEMM (tuned) and flash attention (issue 20's GPU run).
step "@jit functions and programs on cuda:0" \
  env TESSERA_EXEC_DEVICE=cuda:0 "$lit" -sv "$build/tests" --filter 'conformance/jit/|conformance/graph/|conformance/autodiff/'
# The tuner on the GPU (docs/autotuning.md, "The tuner"): the @jit tests
# whose launches are tuned (the stdlib GEMM's points, the generated
# kernels' knobs, grids as lambdas), timed with CUDA events and the L2
# flushed between runs, each result against NumPy; the cache under %t.
step "tuning on cuda:0" \
  env TESSERA_EXEC_DEVICE=cuda:0 "$lit" -sv "$build/tests" --filter 'conformance/autotune/jit-'
step "runtime unit tests" ctest --test-dir "$build" -R 'unit.runtime' --output-on-failure
# NCCL on the GPU: a one-rank communicator of the installed libnccl.so.2 (the
# CUDA Toolkit's, else the one a Python NVIDIA package ships), every
# collective on device memory (docs/distributed.md, "NCCL").
libnccl="${TESSERA_LIBNCCL:-}"
[[ -z "$libnccl" && -e /usr/local/cuda/lib64/libnccl.so.2 ]] && libnccl=/usr/local/cuda/lib64/libnccl.so.2
if [[ -z "$libnccl" ]]; then
  libnccl="$(python3 -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "lib", "libnccl.so.2"))' 2>/dev/null)"
fi
if [[ -n "$libnccl" && -e "$libnccl" ]]; then
  step "NCCL collectives on cuda:0 ($libnccl)" \
    env TESSERA_LIBNCCL="$libnccl" TESSERA_RT_TEST_NCCL_GPU=1 "$build/runtime/runtime_unittests" --test-suite=nccl-gpu
else
  echo "== NCCL collectives on cuda:0: skipped (no libnccl.so.2 found; set TESSERA_LIBNCCL)"
fi
exit "$failed"
