#!/usr/bin/env bash
# Runs clang-tidy (.clang-tidy) over the project's own C++ sources, using the
# compile commands of the dev build (configure it first: cmake --preset dev).
set -euo pipefail
cd "$(dirname "$0")/.."
git ls-files '*.cpp' | grep -v '_test.cpp$' |
  xargs clang-tidy -p build/dev --quiet --extra-arg=-Wno-unknown-warning-option
