#!/usr/bin/env bash
# Paired complete training fits, any arms, the whole process pinned to CPUS
# (default 0-3: a 4-vCPU host), run alternately (the order rotates per pair).
# GPU utilisation is sampled by nvidia-smi every 100 ms during each fit (time-stamped:
# fits_summary.py counts the samples inside the fit, not what follows it).
#
#   bench/fit_pairs.sh DATA OUT PAIRS ARM... -- TRAIN_ARGS...
#
# DATA: a folder with the dataset and its YAML. ARM: NAME=LOADER,COLOR[,LIB]
# (NAME a short word without '-', LOADER ultralytics, detfeed, floor or floor:N (the
# floor holding N of the first epoch's batches, 0 all: --floor-batches), COLOR worker
# or device, LIB a libdetfeed.so for this arm, else DETFEED_LIBRARY). TRAIN_ARGS
# go to bench/train_ultralytics.py (e.g. --model yolo26n.yaml --epochs 6
# --batch 8 --close-mosaic 2). OUT: fit-NAME-PAIR.json, its log and
# utilisation trace, and the summary (bench/fits_summary.py). FIRST (default
# 1) numbers the first pair, so that later calls add pairs to one OUT and the
# order keeps rotating.
set -uo pipefail
data=$(cd "$1" && pwd) out=$2 pairs=$3
shift 3
arms=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do arms+=("$1"); shift; done
[ $# -gt 0 ] && shift
top=$(cd "$(dirname "$0")/.." && pwd)
cpus=${CPUS:-0-3}
mkdir -p "$out"
status=0
n=${#arms[@]}
first=${FIRST:-1}
for p in $(seq "$first" $((first + pairs - 1))); do
  for k in $(seq 0 $((n - 1))); do
    arm=${arms[$(((k + p - 1) % n))]}
    name=${arm%%=*} spec=${arm#*=}
    IFS=, read -r loader color lib <<<"$spec"
    held=()
    if [[ $loader == floor:* ]]; then held=(--floor-batches "${loader#floor:}"); loader=floor; fi
    nvidia-smi --query-gpu=timestamp,utilization.gpu --format=csv,noheader,nounits -lms 100 \
      >"$out/util-$name-$p.txt" 2>/dev/null &
    smi=$!
    DETFEED_LIBRARY=${lib:-${DETFEED_LIBRARY:-}} taskset -c "$cpus" python3 \
      "$top/bench/train_ultralytics.py" "$data" --loader "$loader" --color "$color" \
      --label "$name" --name "fit-$name-$p" --out "$out/fit-$name-$p.json" "${held[@]}" "$@" \
      >"$out/fit-$name-$p.log" 2>&1 || { status=1; tail -5 "$out/fit-$name-$p.log"; }
    kill "$smi" 2>/dev/null
    echo "pair $p arm $name done"
  done
done
python3 "$top/bench/fits_summary.py" "$out" | tee "$out/summary.txt"
exit $status
