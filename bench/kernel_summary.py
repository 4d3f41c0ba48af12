#!/usr/bin/env python3
"""The median of each build's colour-kernel times over runs of
bench/run_kernel_variants.sh.

    python3 bench/kernel_summary.py KERNEL_TXT...

Reads the `== NAME` headers and the `batch N INPUT DTYPE` lines of each
file and prints, per batch and dtype, each build's median back-to-back time
(us per launch) over every run and both inputs (random and photos), with the
range of its share of copy bandwidth.
"""
import collections
import re
import statistics
import sys

HEAD = re.compile(r"== (\S+)")
ROW = re.compile(r"batch\s+(\d+) (\w+) (\w+)\s*:.*?([\d.]+) us back to back,\s+\d+ GB/s = (\d+)% of copy")


def read(paths):
    times = collections.defaultdict(list)
    builds = []
    for path in paths:
        build = None
        with open(path) as f:
            for line in f:
                m = HEAD.match(line)
                if m:
                    build = m.group(1)
                    if build not in builds:
                        builds.append(build)
                    continue
                m = ROW.match(line)
                if m and build:
                    key = (build, int(m.group(1)), m.group(3))
                    times[key].append((float(m.group(4)), int(m.group(5))))
    return builds, times


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    builds, times = read(sys.argv[1:])
    print("batch dtype  " + "  ".join(f"{b:>18s}" for b in builds))
    for batch in sorted({k[1] for k in times}):
        for dtype in ("u8", "f16", "bf16", "f32"):
            cells = []
            for b in builds:
                xs = times.get((b, batch, dtype))
                if not xs:
                    cells.append(f"{'-':>18s}")
                    continue
                us = statistics.median(t for t, _ in xs)
                lo, hi = min(p for _, p in xs), max(p for _, p in xs)
                cells.append(f"{us:7.1f} us {lo:3d}-{hi:3d}%")
            print(f"{batch:5d} {dtype:5s}  " + "  ".join(cells))


if __name__ == "__main__":
    main()
