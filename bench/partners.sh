#!/usr/bin/env bash
# Loader images/s without a RAM cache, partners uniform against partners
# from a window of recent samples, with the RAM cache as the reference; the
# three alternate, RUNS rounds, medians printed.
#
#   bench/partners.sh DETFEED DATA [RUNS] [WINDOW] [WORKERS]
set -euo pipefail
bin=$1 data=$2 runs=${3:-3} window=${4:-128} workers=${5:-2}
declare -A all
for r in $(seq "$runs"); do
  for mode in uniform window ram; do
    case $mode in
      uniform) args=(--cache none) ;;
      window) args=(--cache none --set "partner_window=$window") ;;
      ram) args=(--cache ram) ;;
    esac
    v=$("$bin" bench "$data" --workers "$workers" --epochs 2 "${args[@]}" --json | tail -1 |
      python3 -c 'import json, sys; print(json.load(sys.stdin)["images_per_s"])')
    echo "round $r $mode $v images/s"
    all[$mode]="${all[$mode]:-} $v"
  done
done
for mode in uniform window ram; do
  echo "$mode median $(echo ${all[$mode]} | tr ' ' '\n' | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}') images/s"
done
