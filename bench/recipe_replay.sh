#!/usr/bin/env bash
# The GPU routes' conformance on a CUDA device: `detfeed replay --sha256` (one
# digest over every consumer byte of every batch: images, cls, bboxes,
# batch_idx, keypoints, segment masks) of the worker route (host output), the device colour
# route and the device recipe route (CUDA output), for each dataset x
# hyperparameter set of the conformance suite x OpenCV x dtype, EPOCHS epochs
# (default 2) with close_mosaic 1 (mosaic, then a close_mosaic epoch), RAM
# cache, WORKERS worker threads each (default 4), JOBS replays at a time
# (default 4; the replays are independent, and each one's digest of every
# byte runs on one thread, which bounds a replay more than its workers do).
#
#   [EPOCHS=N] [WORKERS=N] [JOBS=N] [FORMATS=YAML] bench/recipe_replay.sh DETFEED DATA OUT
#
# FORMATS: a dataset YAML whose images are in the other formats (BMP, WebP,
# MPO, ...), replayed too: run_conformance.py --make-formats DIR writes one.
#
# DETFEED: the detfeed tool; DATA: a folder with coco128, coco8-seg and
# coco8-pose; OUT: replay.txt (one row per combination: the three digests and
# EQUAL or DIFFER), each replay's digest in OUT/d/, its messages in
# OUT/errors.txt, and a synthetic dataset of generated images in OUT/synth
# (`detfeed synth`, images no test was written against). A digest counts only
# where the route that ran is the one asked for (the tool's JSON says which; a
# fallback is a DIFFER row). The device colour route has no u8 row (uint8
# output keeps colour in the workers). The last lines check that the OpenCV
# setting reached the tool: for each set and dtype of coco128 the three OpenCV
# versions must not all give one digest. Exit status 1 when a row differs or
# a row could not run.
set -uo pipefail
tool=$1 data=$2 out=$3
. "$(dirname "$0")/datasets_env.sh" "$data"  # DATA's YAMLs resolve into DATA
epochs=${EPOCHS:-2} workers=${WORKERS:-4} jobs=${JOBS:-4}
mkdir -p "$out/d"
: >"$out/replay.txt"
"$tool" synth "$out/synth" --n 64 --imgsz 640 --seed 17 >/dev/null || exit 1
declare -A sets=(
  [default]=""
  [mixup]="mixup=0.5"
  [geometry]="degrees=10,shear=5,perspective=0.0005,flipud=0.5,translate=0.2,scale=0.6"
  [affine]="degrees=10,shear=5,flipud=0.5,translate=0.2,scale=0.6"
  [nohsv]="hsv_h=0,hsv_s=0,hsv_v=0"
  [bgr]="bgr=0.5"
  [cutmix]="cutmix=1.0,mosaic=0,scale=0.9"
  [cutmix_mixup]="cutmix=1.0,mixup=0.5,mosaic=0.3,scale=0.9,degrees=10,shear=5,perspective=0.0005,flipud=0.5,translate=0.2"
  [rect]="rect=1,degrees=10,shear=5,perspective=0.0005,flipud=0.5,translate=0.2,scale=0.6"
  [copy_paste]="copy_paste=0.5"
  [copy_paste_mixup]="copy_paste=0.8,copy_paste_mode=mixup,mixup=0.5"
)
digest() { # FILE ROUTE OUTPUT YAML DTYPE SETTINGS: writes FILE with the digest,
  # empty where the route that ran is not ROUTE/OUTPUT (a fallback) or the
  # replay failed
  "$tool" replay "$4" --epochs "$epochs" --close-mosaic 1 --workers "$workers" --batch 16 \
    --json --route "$2" --output "$3" --dtype "$5" --set "$6" 2>>"$out/errors.txt" |
    python3 -c 'import json, sys; r = json.load(sys.stdin)
print(r["sha256"] if r["route"] == sys.argv[1] else "")' "$2/$3" >"$1"
}
combos=() # NAME YAML SET CV DTYPE, in the order of replay.txt
settings() { echo "cache=ram,opencv=$4${sets[$3]:+,${sets[$3]}}"; }
key() { echo "$1-$3-$4-$5"; }
start() { # NAME YAML SET CV DTYPE: queues its replays, JOBS at a time
  combos+=("$(IFS=$'\t' && echo "$*")")
  local s k
  s=$(settings "$@") k=$(key "$@")
  local spec
  for spec in worker/host device/cuda recipe/cuda; do
    [ "$spec" = device/cuda ] && [ "$5" = u8 ] && continue
    while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
    digest "$out/d/$k.${spec%/*}" "${spec%/*}" "${spec#*/}" "$2" "$5" "$s" &
  done
}
status=0
row() { # NAME YAML SET CV DTYPE: the row of one combination's digests
  local k w d=- r verdict=EQUAL
  k=$(key "$@")
  w=$(cat "$out/d/$k.worker" 2>/dev/null)
  [ "$5" = u8 ] || d=$(cat "$out/d/$k.device" 2>/dev/null)
  r=$(cat "$out/d/$k.recipe" 2>/dev/null)
  if [ -z "$w" ] || [ -z "$r" ] || [ -z "$d" ] || [ "$w" != "$r" ] ||
    { [ "$d" != - ] && [ "$d" != "$w" ]; }; then
    verdict=DIFFER status=1
  fi
  echo "$1 $3 opencv=$4 $5 worker=${w:-none} device=${d:-none} recipe=${r:-none} $verdict" |
    tee -a "$out/replay.txt"
}
for set in default mixup geometry affine nohsv bgr cutmix cutmix_mixup rect; do
  for cv in 4 5.0 5.1; do
    for dt in u8 f32; do start coco128 "$data/coco128/coco128.yaml" "$set" "$cv" "$dt"; done
    if [ "$set" = default ]; then
      for dt in f16 bf16; do start coco128 "$data/coco128/coco128.yaml" "$set" "$cv" "$dt"; done
    fi
  done
done
for ds in coco8-seg/coco8-seg.yaml coco8-pose/coco8-pose.yaml; do
  for set in default geometry bgr cutmix cutmix_mixup rect copy_paste copy_paste_mixup; do
    for cv in 4 5.1; do start "${ds%%/*}" "$data/$ds" "$set" "$cv" f32; done
  done
done
for set in default geometry; do
  for cv in 4 5.1; do start synth "$out/synth/data.yaml" "$set" "$cv" f32; done
done
if [ -n "${FORMATS:-}" ]; then # a dataset of the other image formats
  for set in default geometry bgr; do
    for cv in 4 5.1; do start formats "$FORMATS" "$set" "$cv" f32; done
  done
fi
wait
for c in "${combos[@]}"; do
  IFS=$'\t' read -r -a f <<<"$c"
  row "${f[@]}"
done
rows=$(grep -c . "$out/replay.txt")
same=$(grep -c ' EQUAL$' "$out/replay.txt")
echo "rows: $rows, equal: $same" | tee -a "$out/replay.txt"
# The OpenCV setting reached the tool: per set and dtype, not one digest for all three.
awk '$1 == "coco128" {k = $2 " " $4; split($5, a, "="); d[k] = d[k] " " a[2]}
     END {for (k in d) {n = split(d[k], v, " "); u = 0; delete seen
                        for (i = 1; i <= n; i++) if (!(v[i] in seen)) {seen[v[i]] = 1; u++}
                        print "coco128 " k ": " u " distinct digests over OpenCV 4 / 5.0 / 5.1"}}' \
  "$out/replay.txt" | sort | tee -a "$out/replay.txt"
exit $status
