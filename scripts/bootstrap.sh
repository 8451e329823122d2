#!/usr/bin/env bash
# The main job on a fresh Debian 12 machine: install what is missing, build
# tesserac (release preset) and compile the examples.
#
# Today tesserac ends at GPU code (PTX; cubin when the CUDA Toolkit's ptxas
# is there): the main job checks every example, prints the Tile IR of
# examples/saxpy.tsr and compiles it to PTX (and a cubin when it can). The
# CPU target and `tesserac run` (next stages) extend it to run the kernel on
# the GPU when there is one, else on the CPU.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release -j "$(nproc 2>/dev/null || echo 2)"

tesserac=build/release/tools/tesserac
status=0
for example in examples/*.tsr; do
  if "$tesserac" -fsyntax-only "$example"; then
    echo "ok      $example"
  else
    echo "FAILED  $example"
    status=1
  fi
done
echo "== Tile IR of examples/saxpy.tsr"
"$tesserac" --emit=tile-ir examples/saxpy.tsr
echo "== PTX of examples/saxpy.tsr (sm_80)"
"$tesserac" --emit=ptx -arch=sm_80 examples/saxpy.tsr -o build/release/saxpy.ptx
grep -E '^\.(version|target|visible)' build/release/saxpy.ptx
if "$tesserac" --emit=cubin -arch=sm_80 examples/saxpy.tsr -o build/release/saxpy.cubin 2>/dev/null; then
  echo "== cubin: build/release/saxpy.cubin ($(wc -c <build/release/saxpy.cubin) bytes, ptxas found)"
else
  echo "== no cubin: the CUDA Toolkit's ptxas is not installed (PTX needs no toolkit)"
fi
exit "$status"
