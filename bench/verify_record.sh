#!/usr/bin/env bash
# How long the loader takes to open a dataset with and without the
# verification record: a generated dataset of N images (detfeed synth),
# opened with verify_record none (every image decoded at every open, what
# opening cost before the record), then with the record (the first open
# writes it, the later ones reuse it). RUNS opens of each; the open time
# is bench's open_s (indexing, verification, cache), one short epoch at
# imgsz 64 follows each open.
#
#   bench/verify_record.sh DETFEED [N] [RUNS] [WORKERS] [SIDE]
set -euo pipefail
bin=$1 n=${2:-4000} runs=${3:-3} workers=${4:-2} side=${5:-320}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$bin" synth "$dir/data" --n "$n" --imgsz "$side" >/dev/null
open() {
  "$bin" bench "$dir/data/data.yaml" --workers "$workers" --epochs 1 --imgsz 64 \
    --batch 64 --cache none --set "verify_record=$1" --json | tail -1 |
    python3 -c 'import json, sys; d = json.load(sys.stdin)
print("%.2f s open, %d decoded, record %s" % (d["open_s"], d["verify_decoded"], d["verify_record"]))'
}
echo "$n images of about ${side}x${side}, $workers workers"
for r in $(seq "$runs"); do echo "none  $(open none)"; done
for r in $(seq "$runs"); do echo "auto  $(open auto)"; done
