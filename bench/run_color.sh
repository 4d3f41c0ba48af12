#!/usr/bin/env bash
# Runs the colour benchmark (bench/bench_color.py) for every CPU kernel this
# machine can run, pinned to one core, and writes the JSON results into
# bench/results/. Needs a Release build in build/ and ../shared/data.
set -euo pipefail
cd "$(dirname "$0")/.."
core=${CORE:-0}
images=${IMAGES:-../shared/data/coco128/images/train2017}
for isa in auto avx2 portable; do
  taskset -c "$core" /usr/bin/python3 bench/bench_color.py --lib build/libdetfeed.so \
    --images "$images" --isa "$isa" --rounds "${ROUNDS:-9}" --core -1 \
    --out bench/results --tag "$isa" | grep -E '"(cv2|detfeed)_ms_per_image"|speedup_median|bytes_differing'
done
