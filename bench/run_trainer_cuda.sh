#!/usr/bin/env bash
# The Ultralytics integration on a machine with a CUDA device, in one go:
#   1. python/tests/test_cuda.py: CUDA batches against the host route, and
#      the floats detfeed's trainer hands the model against Ultralytics' own
#      preprocess_batch of the same 8-bit batch on the GPU (bit for bit);
#   2. real fits through detfeed.ultralytics.trainer() on the GPU for each
#      task (python/tests/ultralytics_fits.py), with the device colour route
#      and with the worker route, and the checks of test_ultralytics.py on
#      what the model received.
#
#   bench/run_trainer_cuda.sh DATA OUT
#
# DATA: a folder with coco8, coco8-seg, coco8-pose and coco128; detfeed
# (with its CUDA part) and ultralytics importable; OUT: logs and JSON.
set -uo pipefail
data=$(cd "$1" && pwd) out=$2
top=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
status=0
cd "$top/python/tests"
echo "== pytest test_cuda.py" | tee -a "$out/summary.txt"
DETFEED_TEST_DATA="$data" python3 -m pytest -q -p no:cacheprovider test_cuda.py 2>&1 \
  | tee "$out/pytest_cuda.log" | tail -3 | tee -a "$out/summary.txt"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1
for color in device worker; do
  echo "== fits on cuda:0, colour $color" | tee -a "$out/summary.txt"
  DETFEED_FIT_DEVICE=0 DETFEED_FIT_COLOR=$color python3 ultralytics_fits.py "$data" \
    "/tmp/fits-$color" "$out/fits-$color.json" detect segment pose detect_on_segment_data \
    multi_scale single_cls classes fraction >"$out/fits-$color.log" 2>&1 || status=1
  grep "^fit " "$out/fits-$color.log" | tee -a "$out/summary.txt"
  python3 - "$out/fits-$color.json" "$color" <<'PY' | tee -a "$out/summary.txt" || status=1
import json, sys
fits, color = json.load(open(sys.argv[1])), sys.argv[2]
bad = 0
for name, fit in fits.items():
    batches = fit.get("batches", [])
    ok = ("error" not in fit and batches and fit["loader"]["color"] == color
          and all(b["device"] == "cuda:0" for b in batches)
          and all(b["equals_ultralytics_floats"] for b in batches))
    bad += not ok
    print("%-24s %s: %d batches, colour %s, floats equal Ultralytics' on the GPU: %s" % (
        name, "ok" if ok else "FAILED", len(batches), fit.get("loader", {}).get("color"),
        all(b["equals_ultralytics_floats"] for b in batches)))
sys.exit(1 if bad else 0)
PY
done
exit $status
