#!/usr/bin/env bash
# The routes' training steps interleaved in one fit (bench/route_steps.py),
# the whole process pinned to CPUS (default 0-3: a 4-vCPU host), for each
# configuration given as BATCH:IMGSZ:EPOCHS[:OFFSET].
#
#   bench/run_route_steps.sh DATA OUT ROUTES CONFIG... [-- ROUTE_STEPS_ARGS...]
#
# e.g. bench/run_route_steps.sh coco128 out worker,device,recipe 8:640:19 32:640:31
# OUT: steps-B-I-O.json per configuration, its log's last lines, machine.txt,
# and summary.txt (every configuration's table); bench/steps_summary.py
# OUT/steps-*.json gives the paired ratios' geometric means, each run's and pooled.
set -uo pipefail
data=$1 out=$2 routes=$3
shift 3
configs=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do configs+=("$1"); shift; done
[ $# -gt 0 ] && shift
top=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
{
  date -u +%FT%TZ
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm \
    --format=csv 2>/dev/null
  echo "cpus: ${CPUS:-0-3} of $(nproc); $(grep -m1 'model name' /proc/cpuinfo)"
  python3 -c "import torch, ultralytics, cv2, numpy, detfeed; print('torch', torch.__version__, 'ultralytics', ultralytics.__version__, 'opencv', cv2.__version__, 'numpy', numpy.__version__, 'detfeed', detfeed.__version__)"
} >"$out/machine.txt" 2>&1
status=0
for c in "${configs[@]}"; do
  IFS=: read -r batch imgsz epochs offset <<<"$c"
  offset=${offset:-0}
  tag=b$batch-$imgsz-o$offset
  taskset -c "${CPUS:-0-3}" python3 "$top/bench/route_steps.py" "$data" --routes "$routes" \
    --batch "$batch" --imgsz "$imgsz" --epochs "$epochs" --offset "$offset" \
    --name "steps-$tag" --out "$out/steps-$tag.json" "$@" >"/tmp/steps-$tag.log" 2>&1 ||
    { status=1; tail -30 "/tmp/steps-$tag.log"; }
  sed -n "/^routes interleaved by epoch/,\$p" "/tmp/steps-$tag.log" | tee -a "$out/summary.txt"
done
exit $status
