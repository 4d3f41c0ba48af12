#!/usr/bin/env bash
# Builds of the colour kernel side by side on a CUDA device: for each
# NAME=DIR (DIR: a detfeed wheel built from one version of the kernel, or a
# libdetfeed.so of a CMake build, whose libspng and libturbojpeg the caller
# puts on LD_LIBRARY_PATH where the machine lacks them),
# bench/kernel_check.py (bytes against the CPU route) and
# bench/bench_cuda_kernel.py (time against copy bandwidth), one after the
# other in the same call, the first build again at the end (its two runs
# give the spread between runs of one build).
#
#   [BATCHES=8,64] bench/run_kernel_variants.sh IMAGES OUT NAME=DIR...
#
# IMAGES: a folder of photos (coco128/images/train2017); BATCHES: the batch
# sizes timed (bench_cuda_kernel.py --batches); OUT/kernel.txt gets every
# line, and bench/kernel_summary.py OUT/kernel.txt [MORE...] tabulates each
# build's medians over one or more such runs.
set -uo pipefail
images=$1 out=$2
shift 2
top=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
status=0
for v in "$@" "$1"; do
  name=${v%%=*} dir=${v#*=}
  if [ -f "$dir/libdetfeed.so" ]; then
    lib=$dir/libdetfeed.so
  else
    site=/tmp/kv-$name
    [ -d "$site" ] || python3 -m pip install -q --no-index --no-deps --no-compile \
      --target "$site" "$dir"/detfeed-*.whl || { status=1; continue; }
    lib=$site/detfeed/libdetfeed.so
  fi
  echo "== $name ($dir)" | tee -a "$out/kernel.txt"
  PYTHONPATH=$top/python python3 "$top/bench/kernel_check.py" --lib "$lib" 2>&1 |
    tail -4 | tee -a "$out/kernel.txt"
  [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
  PYTHONPATH=$top/python python3 "$top/bench/bench_cuda_kernel.py" --lib "$lib" \
    --batches "${BATCHES:-8,64}" --images "$images" 2>&1 | grep -E "^(batch|device copy|Traceback|[A-Za-z]*Error)" |
    tee -a "$out/kernel.txt"
done
exit $status
