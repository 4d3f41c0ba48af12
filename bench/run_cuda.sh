#!/usr/bin/env bash
# Everything the CUDA route's evidence needs, in one go, on a machine with a
# CUDA device:
#   1. the kernel against the CPU core on all 2^24 triples (test_cuda_kernel),
#      the route comparison (test_route) and the kernel mutants;
#   2. replay digests of both routes on coco128 (2 epochs, batch 8 and 16,
#      f32 and bf16);
#   3. the kernel benchmark against copy bandwidth and PyTorch float HSV;
#   4. the loader benchmark of the routes on coco128, 4 workers pinned to
#      4 cores, batch 8 and 16, f32, RAM cache, in alternating repeats.
#
#   bench/run_cuda.sh BUILD DATA OUT [REPEATS]
#
# BUILD: a CMake build folder with the CUDA part (tests built); DATA: a folder
# holding coco8 and coco128; OUT: where logs and JSON go; mutants are taken
# from BUILD/mutants when tests/mutation/run_cuda.sh built them there.
set -uo pipefail
build=$(cd "$1" && pwd) data=$(cd "$2" && pwd) out=$3 reps=${4:-3}
top=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
status=0
note() { echo "== $*" | tee -a "$out/summary.txt"; }

{
  date -u; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  nvcc --version 2>/dev/null | tail -1; python3 -c 'import torch; print("torch", torch.__version__, torch.version.cuda)'
  lscpu | grep -E 'Model name|^CPU\(s\)'
} >"$out/machine.txt" 2>&1

note "test_cuda_kernel (all 2^24 triples)"
"$build/tests/test_cuda_kernel" >"$out/conformance.log" 2>&1 || status=1
tail -3 "$out/conformance.log" | tee -a "$out/summary.txt"
note "test_route (coco8, both routes, four dtypes)"
DETFEED_TEST_DATA=$data "$build/tests/test_route" >"$out/route.log" 2>&1 || status=1
tail -2 "$out/route.log" | tee -a "$out/summary.txt"
if [ -d "$build/mutants" ]; then
  note "kernel mutants"
  bash "$top/tests/mutation/run_cuda.sh" run "$build/mutants" 2>&1 | grep -v "^captured\|^f32\|^device\|passed" | tee -a "$out/summary.txt" || status=1
fi

if command -v compute-sanitizer >/dev/null; then
  note "compute-sanitizer: memcheck (test_route), racecheck and synccheck (captured)"
  for t in "memcheck $build/tests/test_route" \
           "racecheck $build/tests/test_cuda_kernel --captured" \
           "synccheck $build/tests/test_cuda_kernel --captured"; do
    set -- $t
    DETFEED_TEST_DATA=$data compute-sanitizer --tool "$@" >"$out/sanitizer-$1.log" 2>&1 || status=1
    grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$out/sanitizer-$1.log" | sed "s/^/$1: /" | tee -a "$out/summary.txt"
  done
fi

note "replay digests"
for b in 8 16; do
  for dt in f32 bf16; do
    for r in worker device; do
      "$build/detfeed" replay "$data/coco128" --epochs 2 --batch "$b" --dtype "$dt" \
        --route "$r" --workers 8 --json | sed "s/^{/{\"batch\":$b,\"dtype\":\"$dt\",/" \
        | tee -a "$out/replay.jsonl"
    done
  done
done
python3 - "$out/replay.jsonl" <<'PY' | tee -a "$out/summary.txt"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
bad = 0
for i in range(0, len(rows), 2):
    w, d = rows[i], rows[i + 1]
    size = {"f32": 4, "bf16": 2}[w["dtype"]]
    same = w["sha256"] == d["sha256"]
    bad += not same
    print(f'batch {w["batch"]:2d} {w["dtype"]:4s}: {w["route"]} vs {d["route"]}: '
          f'{w["images"] * 3 * 640 * 640 * size} image bytes hashed, digests '
          f'{"equal" if same else "DIFFER"} ({w["sha256"][:16]})')
sys.exit(bad)
PY
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1

note "kernel benchmark"
python3 "$top/bench/bench_cuda_kernel.py" --lib "$build/libdetfeed.so" --out "$out" \
  --images "$data/coco128/images/train2017" \
  2>&1 | grep -v '^ \|^{\|^}' | tee -a "$out/summary.txt"

note "loader benchmark (taskset -c 0-3, 4 workers, f32, RAM cache)"
for rep in $(seq "$reps"); do
  for b in 8 16; do
    for cfg in "worker host" "device cuda" "worker cuda"; do
      set -- $cfg
      taskset -c 0-3 "$build/detfeed" bench "$data/coco128" --workers 4 --batch "$b" \
        --epochs 12 --route "$1" --output "$2" --dtype f32 --json 2>&1 \
        | grep '^{' | sed "s/^{/{\"rep\":$rep,/" >>"$out/loader.jsonl"
    done
  done
done
python3 "$top/bench/loader_routes.py" "$out/loader.jsonl" | tee -a "$out/summary.txt"
exit $status
