"""Summarises bench/run_fits.sh: per arm the median wall time of the fit with
min-max, the paired reductions (c vs b, b vs a, c vs a; per pair, then the
median), peak allocated CUDA memory, training images/s, GPU idle fraction
(1 - mean nvidia-smi utilisation over the whole fit, sampled every 100 ms), and
whether the hashes of (b) and (c) agree.

    python3 bench/fits_summary.py OUT
"""
import glob
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_util import median  # noqa: E402

NAMES = {"a": "Ultralytics loader", "b": "detfeed worker route", "c": "detfeed device route"}
HASHES = ("hash_model", "hash_optimizer", "hash_ema", "hash_losses", "hash_inputs")


def idle(path):
    vals = [int(x) for x in open(path).read().split() if x.strip().isdigit()]
    return 1 - sum(vals) / (100 * len(vals)) if vals else None


def main():
    out = sys.argv[1]
    fits = {}
    for f in glob.glob(os.path.join(out, "fit-*-*.json")):
        arm, pair = os.path.basename(f)[4:-5].split("-")
        r = json.load(open(f))
        util = os.path.join(out, "util-%s-%s.txt" % (arm, pair))
        r["idle"] = idle(util) if os.path.exists(util) else None
        fits[(arm, int(pair))] = r
    pairs = sorted({p for _, p in fits})
    print("| arm | wall s (median, min-max) | train images/s | peak CUDA MiB | GPU idle | fits |")
    print("| --- | --- | --- | --- | --- | --- |")
    for arm in "abc":
        rs = [fits[(arm, p)] for p in pairs if (arm, p) in fits]
        if not rs:
            continue
        w = [r["wall_s"] for r in rs]
        idles = [r["idle"] for r in rs if r["idle"] is not None]
        print("| (%s) %s | %.1f (%.1f-%.1f) | %.1f | %.0f | %s | %d |" % (
            arm, NAMES[arm], median(w), min(w), max(w),
            median([r["train_images_per_s"] for r in rs]),
            median([r["peak_cuda_allocated_mib"] for r in rs]),
            "%.1f%%" % (100 * median(idles)) if idles else "n/a", len(rs)))
    for x, y in (("c", "b"), ("b", "a"), ("c", "a")):
        red = [1 - fits[(x, p)]["wall_s"] / fits[(y, p)]["wall_s"] for p in pairs
               if (x, p) in fits and (y, p) in fits]
        if red:
            print("(%s) vs (%s): wall time reduced by %.1f%% (paired median; %.1f%% to %.1f%%)" % (
                x, y, 100 * median(red), 100 * min(red), 100 * max(red)))
    bc = [fits[k] for k in sorted(fits) if k[0] in "bc"]
    for h in HASHES:
        vals = {r.get(h) for r in bc}
        print("%s over the %d (b) and (c) fits: %s" % (
            h, len(bc), "all equal (%s)" % next(iter(vals))[:16] if len(vals) == 1
            else "%d different values" % len(vals)))
    a_inputs = {fits[k].get("hash_inputs") for k in fits if k[0] == "a"}
    print("hash_inputs over the (a) fits: %d different values (Ultralytics' own "
          "randomness)" % len(a_inputs))


if __name__ == "__main__":
    main()
