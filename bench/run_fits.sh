#!/usr/bin/env bash
# Paired complete training fits on a CUDA machine: Ultralytics detection-n
# on coco128 at 640, batch 8, default AMP, RAM cache, 4 dataloader workers,
# the process pinned to 5 cores (a 4-vCPU host), validation every epoch and
# checkpoints. Arms: (a) Ultralytics' loader, (b) detfeed worker route,
# (c) detfeed device route, run alternately (the order rotates per pair).
# GPU utilisation is sampled by nvidia-smi every 100 ms during each fit (time-stamped:
# fits_summary.py counts the samples inside the fit, not what follows it).
#
#   bench/run_fits.sh DATA OUT [PAIRS] [EPOCHS]
#
# DATA: a folder with coco128 (and its YAML); the detfeed and Ultralytics
# packages importable; OUT: one JSON and one utilisation trace per fit, and
# the summary (bench/fits_summary.py).
set -uo pipefail
data=$(cd "$1" && pwd) out=$2 pairs=${3:-3} epochs=${4:-6}
top=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
arms=("a ultralytics worker" "b detfeed worker" "c detfeed device")
status=0
for p in $(seq "$pairs"); do
  for k in 0 1 2; do
    set -- ${arms[$(((k + p - 1) % 3))]}
    name=fit-$1-$p
    nvidia-smi --query-gpu=timestamp,utilization.gpu --format=csv,noheader,nounits -lms 100 \
      >"$out/util-$1-$p.txt" 2>/dev/null &
    smi=$!
    taskset -c 0-4 python3 "$top/bench/train_ultralytics.py" "$data/coco128" --loader "$2" \
      --color "$3" --epochs "$epochs" --batch 8 --workers 4 --name "$name" \
      --out "$out/$name.json" >"$out/$name.log" 2>&1 || { status=1; tail -5 "$out/$name.log"; }
    kill "$smi" 2>/dev/null
    echo "pair $p arm $1 done"
  done
done
python3 "$top/bench/fits_summary.py" "$out" | tee "$out/summary.txt"
exit $status
