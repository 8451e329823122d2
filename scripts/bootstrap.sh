#!/usr/bin/env bash
# The main job on a fresh Debian 12 machine: install what is missing, build
# tesserac (release preset) and compile the examples.
#
# Today tesserac ends at sema (lexing, parsing, names, types, kernel rules):
# the main job checks every example and prints the typed AST of
# examples/saxpy.tsr. Later stages (IR, PTX/CPU code generation, `tesserac
# run`) extend this script to compile and run a kernel on the GPU when there
# is one, else on the CPU.
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
echo "== typed AST of examples/saxpy.tsr"
"$tesserac" --emit=typed-ast examples/saxpy.tsr
exit "$status"
