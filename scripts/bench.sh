#!/usr/bin/env bash
# The main job: installs what is missing, builds detfeed (Release) and runs
# `detfeed bench` on the data it generates itself. Extra arguments go to the
# bench command, e.g. scripts/bench.sh --json
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh build
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DDETFEED_BUILD_TESTS=OFF >/dev/null
cmake --build build -j"$(nproc)" >/dev/null
exec build/detfeed bench "$@"
