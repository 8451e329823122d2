#!/usr/bin/env bash
# The main job on a fresh Debian 12 machine: install what is missing, build
# tesserac (release preset) and compile the examples.
#
# The main job checks every example, prints the Tile IR of
# examples/saxpy.tsr, compiles it to PTX (and a cubin when the CUDA Toolkit's
# ptxas is there), then runs it with `tesserac run` on the GPU when one works,
# else on the CPU target, and checks the result. Last, it installs tesserac
# into build/release/install and builds examples/host-app against that
# package (find_package(Tessera), tessera_add_library): a C++ program that
# runs kernels compiled ahead of time on the CPU and on every GPU that works.
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
echo "== run examples/saxpy.tsr (the GPU when one works, else the CPU)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
python3 - "$work" <<'PY'
import sys
sys.path.insert(0, "tests/conformance/exec/Inputs")
from exec_check import Tensor, write_npy
n = 1000
write_npy(sys.argv[1] + "/x.npy", Tensor("f32", [n], [0.5 * i for i in range(n)]))
write_npy(sys.argv[1] + "/y.npy", Tensor("f32", [n], [1.0] * n))
PY
"$tesserac" run examples/saxpy.tsr --grid 8 --arg x="$work/x.npy" --arg y="$work/y.npy" --arg alpha=2 \
  --out y="$work/out.npy"
python3 - "$work" <<'PY' || status=1
import sys
sys.path.insert(0, "tests/conformance/exec/Inputs")
from exec_check import read_npy
y = read_npy(sys.argv[1] + "/out.npy")
bad = [i for i, v in enumerate(y) if v != 2.0 * 0.5 * i + 1.0]
print("saxpy: all 1000 results match y = 2 * x + y" if not bad else f"saxpy: {len(bad)} results differ, first at {bad[0]}")
sys.exit(1 if bad else 0)
PY
echo "== examples/host-app: kernels compiled ahead of time, called from C++ (docs/aot.md)"
cmake --install build/release --prefix build/release/install >/dev/null
cmake -S examples/host-app -B build/host-app -G Ninja -DCMAKE_PREFIX_PATH="$PWD/build/release/install" >/dev/null
cmake --build build/host-app
build/host-app/host_app || status=1
exit "$status"
