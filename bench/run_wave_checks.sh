#!/usr/bin/env bash
# On a machine with a CUDA device, in one go, what the new cases of the
# training recipe need checked there (bgr, cutmix, copy_paste, rect, the other
# image formats) and the loader's speed with them:
#   1. replay digests of the worker, device and recipe routes for every set of
#      bench/recipe_replay.sh (FORMATS: a dataset of the other formats);
#   2. test_cuda.py (CUDA tensors against the host route), without the
#      trainer tests;
#   3. paired loader images/s, the library before and after (bench/ab_loader.sh,
#      coco128, 2 workers, pinned to CPUS_AB);
#   4. detfeed against Ultralytics' loader with cutmix and copy_paste (both
#      modes), pinned to CPUS_VS (bench/vs_ultralytics.py).
#
#   bench/run_wave_checks.sh HEAD_SITE BASE_SITE DATA FORMATS_YAML OUT
#
# HEAD_SITE, BASE_SITE: `pip install --target` folders of the detfeed wheel
# after and before (HEAD_SITE also holds ultralytics); DATA: a folder with
# coco128, coco8-seg and coco8-pose; OUT: the results (summary.txt).
# STEPS (environment, default 1234) chooses the steps run; PAIRS the pairs
# of step 3 (default 9).
set -uo pipefail
head=$(cd "$1" && pwd) base=$(cd "$2" && pwd) data=$(cd "$3" && pwd) formats=$4 out=$5
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/bench/datasets_env.sh" "$data"  # DATA's YAMLs resolve into DATA
mkdir -p "$out"
status=0
say() { echo "$*" | tee -a "$out/summary.txt"; }
export PYTHONPATH=$head

steps=${STEPS:-1234}
if [[ $steps == *1* ]]; then
say "== 1. replay digests on the three routes"
t=$(date +%s)
FORMATS=$formats JOBS=6 bash "$top/bench/recipe_replay.sh" "$head/detfeed/_bin/detfeed" "$data" \
  "$out/replay" >"$out/replay.log" 2>&1 || status=1
grep -E "rows:|DIFFER" "$out/replay/replay.txt" | tee -a "$out/summary.txt"
say "   $(( $(date +%s) - t )) s"
rm -rf "$out/replay/d" "$out/replay/synth"
fi

if [[ $steps == *2* ]]; then
say "== 2. CUDA tensors against the host route"
(cd "$top/python/tests" && DETFEED_TEST_DATA=$data DETFEED_CLI=$head/detfeed/_bin/detfeed \
  timeout 400 python3 -m pytest -q -p no:cacheprovider test_cuda.py -k "not trainer" \
  >"$out/pytest.log" 2>&1) || status=1
tail -n 1 "$out/pytest.log" | tee -a "$out/summary.txt"
fi

if [[ $steps == *3* ]]; then
say "== 3. loader images/s, before (A) and after (B), coco128, 2 workers"
taskset -c "${CPUS_AB:-0-1}" bash "$top/bench/ab_loader.sh" "$base/detfeed/_bin/detfeed" \
  "$head/detfeed/_bin/detfeed" "$data/coco128/coco128.yaml" "${PAIRS:-9}" --workers 2 \
  --epochs 2 2>&1 | tee -a "$out/summary.txt"
fi

vs() { # NAME DATASET TASK HYP
  taskset -c "${CPUS_VS:-2-5}" python3 "$top/bench/vs_ultralytics.py" "$data/$2" --images 1024 \
    --workers 2 --epochs 2 --warmup 5 --modes ultralytics-none,detfeed-none,detfeed-ram \
    --task "$3" --hyp "$4" --work "/tmp/vs-$1" --out "$out/vs-$1.json" >"$out/vs-$1.log" 2>&1 ||
    status=1
  python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))
for m in r["results"]:
    e = m.get("epochs") or []
    print("   %s %s: %s images/s" % (sys.argv[2], m["mode"],
          " / ".join(str(x["images_per_s"]) for x in e) or m.get("error", "?")[-200:]))' \
    "$out/vs-$1.json" "$1" | tee -a "$out/summary.txt"
}
if [[ $steps == *4* ]]; then
say "== 4. detfeed and Ultralytics' loader with the same arguments"
vs cutmix coco128 detect cutmix=0.5
vs copy_paste coco8-seg segment copy_paste=0.5
vs copy_paste_mixup coco8-seg segment copy_paste=0.5,copy_paste_mode=mixup
vs defaults coco128 detect ""
fi
exit $status
