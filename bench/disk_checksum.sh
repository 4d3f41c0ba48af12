#!/usr/bin/env bash
# What the disk cache's pixel checksum costs, paired: `detfeed bench` with
# cache=disk and no RAM cache in front (--cache 0: every tile of every
# sample is read from the file) on DATA at imgsz 640 with 2 workers, three
# arms built from this checkout and taken in turn, rotating the order each
# pair:
#   head       this checkout: each image read with pread, its checksum
#              checked at its first read in the process (and again after
#              the file changes), the file's stamp looked at after each read
#   unchecked  the same source built with -DDETFEED_BENCH_NO_CHECKSUM
#              (checksums written and compared as 0): head less the checksum
#   mapped     BASE (a commit before the checksums: the file memory-mapped,
#              nothing checked), what users had before
# Each run's figure is the median epoch of EPOCHS epochs (with EPOCHS 1,
# the first epoch, where every image is checked).
#   bench/disk_checksum.sh DATA OUT [PAIRS] [EPOCHS] [BASE]
# OUT gets the builds, the three cache files, one JSON line per run
# (runs.jsonl) and summary.txt (bench/disk_checksum_summary.py).
set -euo pipefail
data=$1 out=$2 pairs=${3:-10} epochs=${4:-4} base=${5:-bb30194}
top=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
out=$(cd "$out" && pwd)
build() { # NAME SOURCE [CFLAGS]
  cmake -S "$2" -B "$out/build-$1" -DCMAKE_BUILD_TYPE=Release -DDETFEED_CUDA=OFF \
    -DDETFEED_BUILD_TESTS=OFF -DCMAKE_C_FLAGS="${3:-}" >/dev/null
  cmake --build "$out/build-$1" -j"$(nproc)" --target detfeed >/dev/null
}
rm -rf "$out/src-mapped" && mkdir -p "$out/src-mapped"
git -C "$top" archive "$base" | tar -x -C "$out/src-mapped"
build head "$top"
build unchecked "$top" -DDETFEED_BENCH_NO_CHECKSUM
build mapped "$out/src-mapped"
arms=(head unchecked mapped)
run() { # ARM EPOCHS
  "$out/build-$1/detfeed" bench "$data" --imgsz 640 --workers 2 --epochs "$2" --cache 0 --json \
    --set "cache=disk,cache_path=$out/$1.cache" 2>/dev/null | tail -1
}
for a in "${arms[@]}"; do run "$a" 1 >/dev/null; done # builds each arm's file
: >"$out/runs.jsonl"
for ((p = 0; p < pairs; p++)); do
  for ((k = 0; k < 3; k++)); do
    a=${arms[$(((p + k) % 3))]}
    echo "{\"pair\":$p,\"arm\":\"$a\",\"run\":$(run "$a" "$epochs")}" >>"$out/runs.jsonl"
  done
done
{
  echo "machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) CPUs; $(uname -r)"
  echo "detfeed $(git -C "$top" rev-parse --short HEAD), base $base; data $data"
  python3 "$top/bench/disk_checksum_summary.py" "$out/runs.jsonl"
} | tee "$out/summary.txt"
