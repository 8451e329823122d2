#!/usr/bin/env bash
# Applies .clang-format to the project's C++ sources (not generated code).
set -euo pipefail
cd "$(dirname "$0")/.."
git ls-files '*.h' '*.cpp' | xargs clang-format -i
