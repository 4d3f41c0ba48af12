"""The first batches of a training loader, route by route, each in a fresh
process: where a fit's first step pays more on one route than another.

    python3 bench/first_batch.py DATA [--imgsz 1280] [--batch 16] [--workers 4] \\
        [--routes device,recipe] [--loading lazy,eager] [--repeats 2] [--cpus 0-3]

DATA: a dataset folder or YAML (opened in place: the verification record is
written beside its labels, as a fit writes it). For each repeat, route and
CUDA module loading mode (CUDA_MODULE_LOADING=LAZY, the default since CUDA
12.2, or EAGER: every kernel loaded when the context starts), a process
pinned to --cpus makes a CUDA tensor first (the trainer's context, as in a
fit), opens detfeed.Loader (device="cuda", float32, cache="ram") and times
each of the first batches: next() until the batch is on the device
(torch.cuda.synchronize), then the epoch's remaining batches. Printed per
process: the open, batch 1, batch 2 and the median of the others (ms).
"""
import argparse
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_util import median, parse_cpus  # noqa: E402


def child(a):
    import torch
    import detfeed
    cuda = torch.cuda.is_available()  # without one: a smoke test in host memory
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    torch.zeros(1, device="cuda" if cuda else "cpu")
    sync()
    t0 = time.perf_counter()
    loader = detfeed.Loader(a.data, imgsz=a.imgsz, batch=a.batch, workers=a.workers,
                            color=a.route if cuda else "worker",
                            device="cuda" if cuda else "cpu", dtype="float32", cache="ram",
                            value_scale="reciprocal", close_mosaic=0)
    opened = time.perf_counter() - t0
    times = []
    with loader:
        it = iter(loader)
        while True:
            t = time.perf_counter()
            try:
                next(it)
            except StopIteration:
                break
            sync()
            times.append(time.perf_counter() - t)
        out = {"route": a.route, "colour": loader.color, "loading": os.environ.get(
            "CUDA_MODULE_LOADING", "default"), "open_ms": opened * 1e3,
            "batch_ms": [x * 1e3 for x in times]}
    print(json.dumps(out))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("data")
    ap.add_argument("--imgsz", type=int, default=1280)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--workers", type=int, default=4)
    ap.add_argument("--routes", default="device,recipe")
    ap.add_argument("--loading", default="lazy,eager")
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--cpus", default="0-3")
    ap.add_argument("--route", help=argparse.SUPPRESS)  # the child's
    a = ap.parse_args()
    if a.route:
        return child(a)
    cpus = parse_cpus(a.cpus)
    for r in range(a.repeats):
        for route in a.routes.split(","):
            for loading in a.loading.split(","):
                env = dict(os.environ, CUDA_MODULE_LOADING=loading.upper())
                cmd = [sys.executable, os.path.abspath(__file__), a.data, "--imgsz",
                       str(a.imgsz), "--batch", str(a.batch), "--workers", str(a.workers),
                       "--route", route]
                run = subprocess.run(cmd, env=env, capture_output=True, text=True,
                                     preexec_fn=lambda: os.sched_setaffinity(0, cpus))
                if run.returncode != 0:
                    print("%s %s: failed\n%s" % (route, loading, run.stderr[-3000:]))
                    return 1
                row = json.loads(run.stdout.strip().splitlines()[-1])
                b = row["batch_ms"]
                print("repeat %d %-7s (colour %s) %-5s: open %7.1f ms; batch 1 %7.1f ms, "
                      "batch 2 %6.1f ms, others %6.1f ms (median of %d)" % (
                          r + 1, route, row["colour"], loading, row["open_ms"], b[0],
                          b[1] if len(b) > 1 else float("nan"),
                          median(b[2:]) if len(b) > 2 else float("nan"), max(len(b) - 2, 0)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
