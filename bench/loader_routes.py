"""Summarises `detfeed bench --json` lines of the colour routes (written by
bench/run_cuda.sh): images/s per route and batch size (median over the
repeats, with min-max), the paired ratios of the device route to the worker
routes, worker CPU milliseconds per sample, and the device memory each holds.

    python3 bench/loader_routes.py loader.jsonl
"""
import json
import os
import sys
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_util import median  # noqa: E402

WORKER_STAGES = ("decode", "resize", "geometry", "colour", "flip", "convert", "pack")


def main():
    rows = [json.loads(line) for line in open(sys.argv[1]) if line.startswith("{")]
    by = defaultdict(list)
    for r in rows:
        by[(r["batch"], r["route"])].append(r)
    for batch in sorted({r["batch"] for r in rows}):
        print(f"batch {batch}:")
        rate = {}
        for (b, route), rs in sorted(by.items()):
            if b != batch:
                continue
            ips = [r["images_per_s"] for r in rs]
            n = [r["images_per_epoch"] * r["epochs"] for r in rs]
            cpu_ms = median([sum(r["stages"][k] for k in WORKER_STAGES) * 1e3 / m
                             for r, m in zip(rs, n)])
            colour_ms = median([r["stages"]["colour"] * 1e3 / m for r, m in zip(rs, n)])
            convert_ms = median([r["stages"]["convert"] * 1e3 / m for r, m in zip(rs, n)])
            rate[route] = {r["rep"]: r["images_per_s"] for r in rs}
            rate[route + "_cpu"] = cpu_ms
            print(f"  {route:12s} {median(ips):8.1f} images/s (min {min(ips):.1f}, max "
                  f"{max(ips):.1f}, {len(ips)} runs); worker CPU {cpu_ms:.2f} ms/sample "
                  f"(colour {colour_ms:.2f}, convert {convert_ms:.2f}); device memory "
                  f"{rs[0]['device_mib']:.1f} MiB")
        dev = rate.get("device/cuda")
        for base in ("worker/host", "worker/cuda"):
            if dev and base in rate:
                ratios = [dev[k] / rate[base][k] for k in dev if k in rate[base]]
                saved = rate[base + "_cpu"] - rate["device/cuda_cpu"]
                print(f"  device/cuda vs {base}: {median(ratios):.2f}x images/s (paired "
                      f"median; {min(ratios):.2f}-{max(ratios):.2f}), {saved:.2f} CPU "
                      f"ms/sample saved")


if __name__ == "__main__":
    main()
