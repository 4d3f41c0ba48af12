#!/usr/bin/env bash
# The Python binding on a machine with a CUDA device, in one go:
#   1. its pytest suite (CUDA tensors against the host route included);
#   2. a few hundred training steps of an Ultralytics detection-n model
#      through detfeed.ultralytics (device colour route).
#
#   bench/run_python_cuda.sh WHEELS BUILD DATA OUT
#
# WHEELS: a folder with the detfeed wheel (pip wheel ./python) and the
# Ultralytics wheels; BUILD: a build folder with the detfeed tool; DATA: a
# folder with coco8 and coco128; OUT: logs and JSON.
set -uo pipefail
wheels=$(cd "$1" && pwd) build=$(cd "$2" && pwd) data=$(cd "$3" && pwd) out=$4
top=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
status=0
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/detfeed-site \
  "$wheels"/*.whl || exit 1
export PYTHONPATH=/tmp/detfeed-site
echo "== pytest" | tee -a "$out/summary.txt"
(cd "$top/python/tests" && DETFEED_CLI="$build/detfeed" DETFEED_TEST_DATA="$data" \
  python3 -m pytest -q -p no:cacheprovider . 2>&1 | tee "$out/pytest.log" | tail -5) \
  | tee -a "$out/summary.txt"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1
grep -q " passed" "$out/pytest.log" && ! grep -q " failed" "$out/pytest.log" || status=1

echo "== Ultralytics through detfeed.ultralytics: 20 epochs of coco128, batch 8" | tee -a "$out/summary.txt"
python3 "$top/bench/train_ultralytics.py" "$data/coco128" --loader detfeed --color device \
  --epochs 20 --batch 8 --val 0 --name steps --out "$out/steps.json" >"$out/steps.log" 2>&1 || status=1
python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print('steps', r['steps'], 'wall_s', round(r['wall_s'],1), 'final loss', r['final_loss'], 'metrics', r['metrics'])" "$out/steps.json" | tee -a "$out/summary.txt"

exit $status
