#!/usr/bin/env bash
# Installs what is missing, then builds and runs every test:
#   1. formatting (clang-format) of the C sources;
#   2. a Release build with -Werror (and the CUDA part when nvcc is present),
#      all unit, oracle and mutation tests;
#   3. an ASan+UBSan build, the same tests.
# The oracle tests read ../shared/data beside the checkout.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh test
jobs=$(nproc)

echo "== format"
files=$(git ls-files 'include/*.h' 'src/*.c' 'src/*.h' 'tools/*.c' 'tools/*.h' 'tests/*.c' 'tests/*.h' | grep -v hsv_tables.h)
clang-format --dry-run -Werror $files

echo "== release build, -Werror"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DDETFEED_WERROR=ON >/dev/null
cmake --build build -j"$jobs" >/dev/null
(cd build && ctest -j"$jobs" --output-on-failure)

echo "== ASan+UBSan build"
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDETFEED_WERROR=ON \
  -DDETFEED_SANITIZE=address -DDETFEED_CUDA=OFF >/dev/null
cmake --build build-asan -j"$jobs" >/dev/null
(cd build-asan && ctest -j"$jobs" --output-on-failure -E test_mutation)
